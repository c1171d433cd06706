;; Hostile: grows memory one page at a time until memory.grow returns -1
;; (the limit; no trap), then returns the number of pages it holds. With a
;; 64 MiB limit that is 1024.
(module
  (memory (export "memory") 1)
  (func (export "run") (result i32)
    (loop $l
      (if (i32.ne (memory.grow (i32.const 1)) (i32.const -1))
        (then (br $l))))
    (memory.size)))
