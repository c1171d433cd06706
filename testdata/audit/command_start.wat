;; A command module: exports _start (and run) but not _initialize. _start
;; is never called (sdk/ABI.md §1: reactor, not command): wasm_entrypoint
;; fails.
(module
  (func (export "_start"))
  (func (export "run") (result i32)
    (i32.const 0)))
