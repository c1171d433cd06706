;; Hostile: unbounded recursion. Traps with code stack_overflow.
(module
  (func $down (param i32) (result i32)
    (i32.add (call $down (i32.add (local.get 0) (i32.const 1))) (i32.const 1)))
  (func (export "run") (result i32)
    (call $down (i32.const 0))))
