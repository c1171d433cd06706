;; Hostile: an infinite loop. Ends with fuel_exhausted (small fuel) or
;; timeout (huge fuel, short deadline).
(module
  (func (export "run") (result i32)
    (loop $l (br $l))
    (i32.const 0)))
