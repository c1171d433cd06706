;; Exports no entrypoint (neither palyra_plugin_main nor run): missing_export.
(module
  (func (export "other") (result i32)
    (i32.const 0)))
