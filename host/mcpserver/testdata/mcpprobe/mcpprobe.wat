;; mcpprobe: the test skill of the MCP server's tests (host/mcpserver,
;; host/daemon, cmd/palyra-host; manifest in skill.toml beside this file).
;; Every tool of the skill runs this module; its tool input decides what it
;; does:
;;   contains the bytes spin!  loops forever (ended by the deadline, the
;;                             fuel, or the caller's cancel);
;;   else contains fail!       exits 1 with the tool error
;;                             {"code":"bad_thing","message":"it broke"};
;;   otherwise                 writes its tool input (the value of "input" in
;;                             its input document, sdk/ABI.md §3) as its
;;                             output and exits 0.
;; A failure of the ABI itself traps with unreachable.
;;
;; Regenerate mcpprobe.wasm from the repository root with
;;   go run ./sidecar/internal/tools/wat2wasm host/mcpserver/testdata/mcpprobe
(module
  (import "palyra:skills/host@1" "input-len" (func $input_len (result i32)))
  (import "palyra:skills/host@1" "input-read" (func $input_read (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)

  ;; The input document is read to $base, the second page onwards.
  (global $base i32 (i32.const 65536))
  (data (i32.const 0) "\"input\":")
  (data (i32.const 16) ",\"grants\":")
  (data (i32.const 32) "spin!")
  (data (i32.const 48) "fail!")
  (data (i32.const 64) "{\"code\":\"bad_thing\",\"message\":\"it broke\"}")

  ;; $match reports whether the len bytes at p equal those at pat.
  (func $match (param $p i32) (param $pat i32) (param $len i32) (result i32)
    (local $i i32)
    (block $no
      (loop $l
        (if (i32.ge_u (local.get $i) (local.get $len)) (then (return (i32.const 1))))
        (br_if $no (i32.ne (i32.load8_u (i32.add (local.get $p) (local.get $i)))
                           (i32.load8_u (i32.add (local.get $pat) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (i32.const 0))

  ;; $find returns the first position p, from <= p, p + len <= end, where
  ;; the len bytes at pat occur; -1 when there is none.
  (func $find (param $from i32) (param $end i32) (param $pat i32) (param $len i32) (result i32)
    (local $p i32)
    (local.set $p (local.get $from))
    (block $no
      (loop $l
        (br_if $no (i32.gt_s (i32.add (local.get $p) (local.get $len)) (local.get $end)))
        (if (call $match (local.get $p) (local.get $pat) (local.get $len))
          (then (return (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $l)))
    (i32.const -1))

  (func (export "palyra_plugin_main") (result i32)
    (local $n i32) (local $start i32) (local $end i32) (local $p i32)
    (local.set $n (call $input_len))
    (if (i32.lt_s (local.get $n) (i32.const 0)) (then unreachable))
    ;; pages for the document after the first one
    (if (i32.lt_s
          (memory.grow (i32.add (i32.shr_u (local.get $n) (i32.const 16)) (i32.const 1)))
          (i32.const 0))
      (then unreachable))
    (if (i32.ne (call $input_read (global.get $base) (local.get $n)) (local.get $n))
      (then unreachable))
    (local.set $end (i32.add (global.get $base) (local.get $n)))
    ;; spin! : loop until stopped from outside
    (if (i32.ge_s (call $find (global.get $base) (local.get $end) (i32.const 32) (i32.const 5)) (i32.const 0))
      (then (loop $spin (br $spin))))
    ;; fail! : the tool error document, exit 1
    (if (i32.ge_s (call $find (global.get $base) (local.get $end) (i32.const 48) (i32.const 5)) (i32.const 0))
      (then
        (if (i32.ne (call $output_write (i32.const 64) (i32.const 41)) (i32.const 0)) (then unreachable))
        (return (i32.const 1))))
    ;; start: after the first "input": (8 bytes); the document start if none
    (local.set $start (global.get $base))
    (local.set $p (call $find (global.get $base) (local.get $end) (i32.const 0) (i32.const 8)))
    (if (i32.ge_s (local.get $p) (i32.const 0))
      (then (local.set $start (i32.add (local.get $p) (i32.const 8)))))
    ;; end: at the last ,"grants": (10 bytes); the document end if none
    (local.set $p (i32.sub (local.get $end) (i32.const 10)))
    (block $found
      (loop $back
        (br_if $found (i32.lt_s (local.get $p) (local.get $start)))
        (if (call $match (local.get $p) (i32.const 16) (i32.const 10))
          (then (local.set $end (local.get $p)) (br $found)))
        (local.set $p (i32.sub (local.get $p) (i32.const 1)))
        (br $back)))
    (if (i32.ne (call $output_write (local.get $start) (i32.sub (local.get $end) (local.get $start))) (i32.const 0))
      (then unreachable))
    (i32.const 0)))
