;; Hostile: executes unreachable. Traps with code unreachable.
(module
  (func (export "run") (result i32)
    unreachable))
