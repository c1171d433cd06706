;; Imports all eight capability functions of
;; palyra:plugins/host-capabilities@0.1.0, as Palyra's runtime tests do.
;; Each *-count/*-handle pair fails wasm_import_surface when the manifest
;; declares no capability of its kind; the channel pair always does, since
;; a manifest cannot declare channels.
(module
  (import "palyra:plugins/host-capabilities@0.1.0" "http-count" (func $http_count (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "http-handle" (func $http_handle (param i32) (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "secret-count" (func $secret_count (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "secret-handle" (func $secret_handle (param i32) (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "storage-count" (func $storage_count (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "storage-handle" (func $storage_handle (param i32) (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "channel-count" (func $channel_count (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "channel-handle" (func $channel_handle (param i32) (result i32)))
  (func (export "run") (result i32)
    (i32.add
      (i32.add (call $http_count) (call $secret_count))
      (i32.add (call $storage_count) (call $channel_count)))))
