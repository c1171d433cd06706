;; hookprobe: a hook target for the daemon's tests (skill test.hookprobe,
;; tool test.probe, manifest in skill.toml beside this file).
;;
;; It writes its tool input, the value of "input" in its input document
;; (sdk/ABI.md §3: abi, invocation_id, skill_id, tool_id, input, grants,
;; deadline, in that order), to its output unchanged, so a test sees exactly
;; what the daemon sent: the bytes between the first "input": and the last
;; ,"grants": of the document. Its exit
;; code is the hook decision the input asks for (Palyra's hook decisions, see host/hooks):
;;   30 (block)    when the document contains the bytes exit:30 anywhere,
;;   10 (annotate) else when it contains exit:10,
;;   0  (continue) otherwise.
;; The match needs no quotes around it, so {"reason":"exit:30"} and
;; {"reason":"please exit:30"} both give 30.
;;
;; The runtime keeps the output of an exit code 0 as the call's output; a
;; non-zero code is a tool_error whose message is the output's first 4 KiB.
;; A failure of the ABI itself (input-read or output-write refused, memory
;; that cannot grow) traps with unreachable, so it never reads as a decision.
;;
;; Regenerate hookprobe.wasm from the repository root with
;;   go run ./sidecar/internal/tools/wat2wasm host/daemon/testdata/hookprobe
(module
  (import "palyra:skills/host@1" "input-len" (func $input_len (result i32)))
  (import "palyra:skills/host@1" "input-read" (func $input_read (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (memory (export "memory") 1)

  ;; The input document is read to $base, the second page onwards.
  (global $base i32 (i32.const 65536))
  (data (i32.const 0) "\"input\":")
  (data (i32.const 16) ",\"grants\":")

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

  ;; $decision scans n bytes at $base for "exit:30" and "exit:10".
  (func $decision (param $n i32) (result i32)
    (local $p i32) (local $end i32) (local $code i32)
    (local.set $p (global.get $base))
    ;; the last position a 7-byte match can start at, plus one
    (local.set $end (i32.sub (i32.add (global.get $base) (local.get $n)) (i32.const 6)))
    (block $done
      (loop $scan
        (br_if $done (i32.ge_s (local.get $p) (local.get $end)))
        ;; "exit" is the little-endian i32 0x74697865, then ':' d '0'
        (if (i32.eq (i32.load align=1 (local.get $p)) (i32.const 0x74697865))
          (then
            (if (i32.and
                  (i32.eq (i32.load8_u offset=4 (local.get $p)) (i32.const 0x3a))
                  (i32.eq (i32.load8_u offset=6 (local.get $p)) (i32.const 0x30)))
              (then
                (if (i32.eq (i32.load8_u offset=5 (local.get $p)) (i32.const 0x33))
                  (then (return (i32.const 30))))
                (if (i32.eq (i32.load8_u offset=5 (local.get $p)) (i32.const 0x31))
                  (then (local.set $code (i32.const 10))))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $scan)))
    (local.get $code))

  (func (export "palyra_plugin_main") (result i32)
    (local $n i32) (local $code i32) (local $p i32) (local $start i32) (local $end i32)
    (local.set $n (call $input_len))
    (if (i32.lt_s (local.get $n) (i32.const 0)) (then unreachable))
    ;; pages for the document after the first one
    (if (i32.lt_s
          (memory.grow (i32.add (i32.shr_u (local.get $n) (i32.const 16)) (i32.const 1)))
          (i32.const 0))
      (then unreachable))
    (if (i32.ne (call $input_read (global.get $base) (local.get $n)) (local.get $n))
      (then unreachable))
    (local.set $code (call $decision (local.get $n)))
    ;; start: after the first "input": (8 bytes); the document start if none
    (local.set $start (global.get $base))
    (local.set $p (global.get $base))
    (block $found
      (loop $fwd
        (br_if $found (i32.gt_s (i32.add (local.get $p) (i32.const 8)) (i32.add (global.get $base) (local.get $n))))
        (if (call $match (local.get $p) (i32.const 0) (i32.const 8))
          (then (local.set $start (i32.add (local.get $p) (i32.const 8))) (br $found)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $fwd)))
    ;; end: at the last ,"grants": (10 bytes); the document end if none
    (local.set $end (i32.add (global.get $base) (local.get $n)))
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
    (local.get $code)))
