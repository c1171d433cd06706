;; Hostile: declares 2000 pages (125 MiB) of initial memory, over the 64 MiB
;; default limit: instantiation fails with memory_limit_exceeded.
(module
  (memory (export "memory") 2000)
  (func (export "run") (result i32)
    (i32.const 0)))
