;; Palyra's wasi:filesystem test module: imports path_open from the
;; component-model interface "wasi:filesystem". Without a filesystem root in
;; the manifest, wasm_wasi_filesystem_imports fails (Palyra's rule), and the
;; module is not one the host provides either (wasm_import_modules).
(module
  (import "wasi:filesystem" "path_open" (func $path_open))
  (func (export "run") (result i32)
    (i32.const 0)))
