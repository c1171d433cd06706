;; Palyra's baseline: the smallest module Palyra's runtime actually runs,
;; exporting run: () -> i32 and importing nothing. (Palyra's own baseline
;; test audits the empty module "\0asm\1\0\0\0", which has no run export;
;; this audit fails that one in wasm_entrypoint.)
(module
  (func (export "run") (result i32)
    (i32.const 0)))
