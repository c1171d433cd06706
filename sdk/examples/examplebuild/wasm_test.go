package examplebuild_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// A tiny reader of the import and export sections of a core wasm module
// (https://webassembly.github.io/spec/core/binary/modules.html): enough to
// check what a built example links against and what it offers.

type funcType struct {
	params, results []byte // value types: 0x7f i32, 0x7e i64, 0x7d f32, 0x7c f64
}

func (t funcType) String() string {
	name := func(vs []byte) string {
		var s []string
		for _, v := range vs {
			switch v {
			case 0x7f:
				s = append(s, "i32")
			case 0x7e:
				s = append(s, "i64")
			case 0x7d:
				s = append(s, "f32")
			case 0x7c:
				s = append(s, "f64")
			default:
				s = append(s, fmt.Sprintf("0x%02x", v))
			}
		}
		return "(" + strings.Join(s, ",") + ")"
	}
	return name(t.params) + "->" + name(t.results)
}

type wasmImport struct {
	module, name string
	kind         byte   // 0 func, 1 table, 2 memory, 3 global
	sig          string // for functions
}

type wasmExport struct {
	name string
	kind byte
	sig  string // for functions
}

type wasmModule struct {
	imports []wasmImport
	exports []wasmExport
}

type reader struct {
	b   []byte
	off int
}

var errTruncated = errors.New("wasm: truncated")

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) u32() (uint32, error) {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errors.New("wasm: LEB128 too long")
}

func (r *reader) bytes(n uint32) ([]byte, error) {
	if uint64(r.off)+uint64(n) > uint64(len(r.b)) {
		return nil, errTruncated
	}
	b := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return b, nil
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	return string(b), err
}

func (r *reader) limits() error {
	flag, err := r.byte()
	if err != nil {
		return err
	}
	if _, err := r.u32(); err != nil {
		return err
	}
	if flag&1 != 0 {
		_, err = r.u32()
	}
	return err
}

func parseWasm(b []byte) (*wasmModule, error) {
	if len(b) < 8 || !bytes.Equal(b[:8], []byte{0, 'a', 's', 'm', 1, 0, 0, 0}) {
		return nil, errors.New("wasm: no \\0asm version 1 header")
	}
	r := &reader{b: b, off: 8}
	m := &wasmModule{}
	var types []funcType
	var funcTypeIdx []uint32 // type index of every function: imports first
	var exports []struct {
		name  string
		kind  byte
		index uint32
	}
	for r.off < len(b) {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, err
		}
		body, err := r.bytes(size)
		if err != nil {
			return nil, err
		}
		s := &reader{b: body}
		switch id {
		case 1: // type
			n, err := s.u32()
			if err != nil {
				return nil, err
			}
			for i := uint32(0); i < n; i++ {
				if form, err := s.byte(); err != nil || form != 0x60 {
					return nil, fmt.Errorf("wasm: type %d: bad form", i)
				}
				var t funcType
				for _, dst := range []*[]byte{&t.params, &t.results} {
					c, err := s.u32()
					if err != nil {
						return nil, err
					}
					v, err := s.bytes(c)
					if err != nil {
						return nil, err
					}
					*dst = append([]byte(nil), v...)
				}
				types = append(types, t)
			}
		case 2: // import
			n, err := s.u32()
			if err != nil {
				return nil, err
			}
			for i := uint32(0); i < n; i++ {
				var im wasmImport
				if im.module, err = s.name(); err != nil {
					return nil, err
				}
				if im.name, err = s.name(); err != nil {
					return nil, err
				}
				if im.kind, err = s.byte(); err != nil {
					return nil, err
				}
				switch im.kind {
				case 0:
					ti, err := s.u32()
					if err != nil {
						return nil, err
					}
					if int(ti) >= len(types) {
						return nil, fmt.Errorf("wasm: import %s.%s: type %d out of range", im.module, im.name, ti)
					}
					im.sig = types[ti].String()
					funcTypeIdx = append(funcTypeIdx, ti)
				case 1:
					if _, err := s.byte(); err != nil {
						return nil, err
					}
					if err := s.limits(); err != nil {
						return nil, err
					}
				case 2:
					if err := s.limits(); err != nil {
						return nil, err
					}
				case 3:
					if _, err := s.bytes(2); err != nil {
						return nil, err
					}
				default:
					return nil, fmt.Errorf("wasm: import kind %d", im.kind)
				}
				m.imports = append(m.imports, im)
			}
		case 3: // function
			n, err := s.u32()
			if err != nil {
				return nil, err
			}
			for i := uint32(0); i < n; i++ {
				ti, err := s.u32()
				if err != nil {
					return nil, err
				}
				funcTypeIdx = append(funcTypeIdx, ti)
			}
		case 7: // export
			n, err := s.u32()
			if err != nil {
				return nil, err
			}
			for i := uint32(0); i < n; i++ {
				var e struct {
					name  string
					kind  byte
					index uint32
				}
				if e.name, err = s.name(); err != nil {
					return nil, err
				}
				if e.kind, err = s.byte(); err != nil {
					return nil, err
				}
				if e.index, err = s.u32(); err != nil {
					return nil, err
				}
				exports = append(exports, e)
			}
		}
	}
	for _, e := range exports {
		ex := wasmExport{name: e.name, kind: e.kind}
		if e.kind == 0 {
			if int(e.index) >= len(funcTypeIdx) || int(funcTypeIdx[e.index]) >= len(types) {
				return nil, fmt.Errorf("wasm: export %s: function %d out of range", e.name, e.index)
			}
			ex.sig = types[funcTypeIdx[e.index]].String()
		}
		m.exports = append(m.exports, ex)
	}
	return m, nil
}
