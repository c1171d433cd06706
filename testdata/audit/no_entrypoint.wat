;; Exports "answer" but neither palyra_plugin_main nor run:
;; wasm_entrypoint fails.
(module
  (func (export "answer") (result i32)
    (i32.const 42)))
