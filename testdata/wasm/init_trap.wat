;; A reactor whose _initialize traps (unreachable) after logging "starting":
;; every call fails with trap "unreachable", prepared instances or not.
(module
  (import "palyra:skills/host@1" "log" (func $log (param i32 i32 i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "starting")
  (func (export "_initialize")
    (call $log (i32.const 2) (i32.const 0) (i32.const 8))
    unreachable)
  (func (export "palyra_plugin_main") (result i32)
    (i32.const 0)))
