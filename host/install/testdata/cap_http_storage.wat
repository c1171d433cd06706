;; Imports the http and storage handle functions only. With a manifest that
;; declares an http host and a write root (Palyra's sample), the import
;; surface passes.
(module
  (import "palyra:plugins/host-capabilities@0.1.0" "http-count" (func $http_count (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "http-handle" (func $http_handle (param i32) (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "storage-count" (func $storage_count (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "storage-handle" (func $storage_handle (param i32) (result i32)))
  (func (export "run") (result i32)
    (i32.add (call $http_count) (call $storage_count))))
