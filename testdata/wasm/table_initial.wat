;; Hostile: declares a table of 200000 elements, over the 100000 default
;; limit: instantiation fails with memory_limit_exceeded.
(module
  (table 200000 funcref)
  (func (export "run") (result i32)
    (i32.const 0)))
