;; Palyra's runtime test: the export `answer` returns 42. Run it with the
;; entrypoint override "answer"; as a Palyra module (no palyra:skills/host@1
;; import) its output is {"exit_code":42}.
(module
  (func (export "answer") (result i32)
    (i32.const 42)))
