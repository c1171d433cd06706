;; Imports WASI preview 1 functions outside the subset of sdk/ABI.md §2.3,
;; each with its real signature: a socket (sock_accept), two filesystem
;; functions (fd_readdir, fd_pread) and proc_raise. wasm_import_surface
;; fails naming each.
(module
  (import "wasi_snapshot_preview1" "sock_accept"
    (func (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_readdir"
    (func (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_pread"
    (func (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_raise"
    (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "run") (result i32)
    (i32.const 0)))
