;; memdump: a guest that proves a secret injected by the host never enters
;; the sandbox. It finds the first "http://" URL in its input document, asks
;; for it through HTTP handle 10000 with secret handle 20000 injected as
;; "authorization: Bearer {secret}", reads the response, then writes its whole
;; first memory page (request, response and all) as hex into the output:
;; {"dump":"<hex>"}. The test decodes the dump and looks for the secret.
(module
  (import "palyra:skills/host@1" "input-len" (func $input_len (result i32)))
  (import "palyra:skills/host@1" "input-read" (func $input_read (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "capability-call" (func $cap (param i32 i32 i32) (result i32)))
  (import "palyra:skills/host@1" "response-read" (func $resp_read (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $out (param i32 i32) (result i32)))
  ;; page 0: constants (0..511), input (1024..9215), request (9216..17407),
  ;; response (17408..33791); pages 1-2: the hex dump of page 0.
  (memory (export "memory") 3)
  (data (i32.const 0) "http://")
  (data (i32.const 16) "{\"url\":\"")
  (data (i32.const 32) "\",\"secret_headers\":[{\"name\":\"authorization\",\"secret_handle\":20000,\"format\":\"Bearer {secret}\"}]}")
  (data (i32.const 256) "0123456789abcdef")
  (data (i32.const 272) "{\"dump\":\"")
  (data (i32.const 288) "\"}")
  (func $copy (param $dst i32) (param $src i32) (param $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (i32.store8 (local.get $dst) (i32.load8_u (local.get $src)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 1)))
        (local.set $src (i32.add (local.get $src) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next))))
  (func (export "run") (result i32)
    (local $n i32) (local $i i32) (local $end i32) (local $start i32) (local $len i32) (local $req i32) (local $r i32) (local $c i32)
    ;; read the input document (at most 8 KiB)
    (local.set $n (call $input_len))
    (if (i32.gt_u (local.get $n) (i32.const 8192)) (then (local.set $n (i32.const 8192))))
    (drop (call $input_read (i32.const 1024) (local.get $n)))
    ;; find "http://"
    (local.set $i (i32.const 1024))
    (local.set $end (i32.sub (i32.add (i32.const 1024) (local.get $n)) (i32.const 7)))
    (local.set $start (i32.const -1))
    (block $found
      (loop $scan
        (br_if $found (i32.gt_s (local.get $i) (local.get $end)))
        (if (i32.and
              (i32.eq (i32.load (local.get $i)) (i32.load (i32.const 0)))
              (i32.eq (i32.load (i32.add (local.get $i) (i32.const 3))) (i32.load (i32.const 3))))
          (then (local.set $start (local.get $i)) (br $found)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (if (i32.lt_s (local.get $start) (i32.const 0)) (then (return (i32.const 2))))
    ;; the URL runs to the next '"'
    (local.set $i (local.get $start))
    (block $stop
      (loop $walk
        (br_if $stop (i32.ge_u (local.get $i) (i32.add (i32.const 1024) (local.get $n))))
        (br_if $stop (i32.eq (i32.load8_u (local.get $i)) (i32.const 34)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $walk)))
    (local.set $len (i32.sub (local.get $i) (local.get $start)))
    ;; request = prefix + url + suffix at 9216
    (call $copy (i32.const 9216) (i32.const 16) (i32.const 8))
    (call $copy (i32.const 9224) (local.get $start) (local.get $len))
    (call $copy (i32.add (i32.const 9224) (local.get $len)) (i32.const 32) (i32.const 95))
    (local.set $r (call $cap (i32.const 10000) (i32.const 9216) (i32.add (i32.add (i32.const 8) (local.get $len)) (i32.const 95))))
    (if (i32.gt_s (local.get $r) (i32.const 0))
      (then (drop (call $resp_read (i32.const 17408) (i32.const 16384)))))
    ;; hex of page 0 into 65536..196607
    (local.set $i (i32.const 0))
    (block $hexed
      (loop $hex
        (br_if $hexed (i32.ge_u (local.get $i) (i32.const 65536)))
        (local.set $c (i32.load8_u (local.get $i)))
        (i32.store8 (i32.add (i32.const 65536) (i32.shl (local.get $i) (i32.const 1)))
          (i32.load8_u (i32.add (i32.const 256) (i32.shr_u (local.get $c) (i32.const 4)))))
        (i32.store8 (i32.add (i32.const 65537) (i32.shl (local.get $i) (i32.const 1)))
          (i32.load8_u (i32.add (i32.const 256) (i32.and (local.get $c) (i32.const 15)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $hex)))
    (drop (call $out (i32.const 272) (i32.const 9)))
    (drop (call $out (i32.const 65536) (i32.const 131072)))
    (drop (call $out (i32.const 288) (i32.const 2)))
    (i32.const 0)))
