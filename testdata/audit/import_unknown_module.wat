;; Imports from a module the host does not provide ("env"), as a C or
;; AssemblyScript toolchain might: wasm_import_modules fails naming env.now.
(module
  (import "env" "now" (func $now (result i64)))
  (func (export "run") (result i32)
    (i32.const 0)))
