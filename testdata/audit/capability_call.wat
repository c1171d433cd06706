;; Imports capability-call (and response-read) from palyra:skills/host@1.
;; With a manifest that declares no capability, every call is not_granted:
;; wasm_import_surface warns.
(module
  (import "palyra:skills/host@1" "capability-call"
    (func $capability_call (param i32 i32 i32) (result i32)))
  (import "palyra:skills/host@1" "response-read"
    (func $response_read (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "{\"op\":\"describe\"}")
  (func (export "palyra_plugin_main") (result i32)
    (call $capability_call (i32.const 20000) (i32.const 0) (i32.const 17))))
