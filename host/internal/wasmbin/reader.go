package wasmbin

import (
	"fmt"
	"unicode/utf8"
)

// reader reads one section (or the section framing) of a module. buf is
// the part being read and base the module offset of buf[0], so errors
// carry module offsets. Every method either consumes input or fails.
type reader struct {
	buf     []byte
	pos     int
	base    int64
	section string // for errors; "" outside any section
	lim     *Limits
}

// off returns the module offset of the next byte.
func (r *reader) off() int64 { return r.base + int64(r.pos) }

// left returns the number of unread bytes.
func (r *reader) left() int { return len(r.buf) - r.pos }

// failAt returns a *FormatError at the module offset at.
func (r *reader) failAt(at int64, format string, args ...any) *FormatError {
	return &FormatError{Offset: at, Section: r.section, Reason: fmt.Sprintf(format, args...)}
}

// fail returns a *FormatError at the next unread byte.
func (r *reader) fail(format string, args ...any) *FormatError {
	return r.failAt(r.off(), format, args...)
}

// overLimit returns a *LimitError at the module offset at.
func (r *reader) overLimit(at int64, limit, what string, value uint64, max int) *LimitError {
	return &LimitError{Limit: limit, What: what, Value: value, Max: uint64(max), Section: r.section, Offset: at}
}

// eof returns the error for input that ends too early.
func (r *reader) eof() *FormatError {
	if r.section == "" {
		return r.fail("unexpected end of module")
	}
	return r.fail("unexpected end of section")
}

func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.buf) {
		return 0, r.eof()
	}
	b := r.buf[r.pos]
	r.pos++
	return b, nil
}

// bytes returns the next n bytes, which alias the input.
func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || n > r.left() {
		return nil, r.eof()
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

// leb reads a LEB128 integer of the given bit width, as the spec defines
// it: at most ceil(bits/7) bytes (shorter padded forms are allowed), and
// the unused bits of the last byte must be zero (unsigned) or copies of
// the sign bit (signed). A signed value is returned sign-extended to 64
// bits.
func (r *reader) leb(bits int, signed bool) (uint64, error) {
	start := r.off()
	maxBytes := (bits + 6) / 7
	var v uint64
	var shift uint
	for i := 0; ; i++ {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		if i == maxBytes-1 {
			if b&0x80 != 0 {
				return 0, r.failAt(start, "integer representation too long (more than %d bytes for a %d-bit integer)", maxBytes, bits)
			}
			used := uint(bits - 7*(maxBytes-1)) // value bits in the last byte, 1..7
			extra := b >> used                  // the 7-used bits above them
			want := byte(0)
			if signed && (b>>(used-1))&1 == 1 {
				want = 0x7F >> used
			}
			if extra != want {
				return 0, r.failAt(start, "integer too large for %d bits", bits)
			}
		}
		if shift < 64 {
			v |= uint64(b&0x7F) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			if signed && shift < 64 && b&0x40 != 0 {
				v |= ^uint64(0) << shift
			}
			return v, nil
		}
	}
}

func (r *reader) u32() (uint32, error) {
	v, err := r.leb(32, false)
	return uint32(v), err
}

func (r *reader) u64() (uint64, error) { return r.leb(64, false) }

func (r *reader) s32() (int32, error) {
	v, err := r.leb(32, true)
	return int32(v), err
}

func (r *reader) s33() (int64, error) {
	v, err := r.leb(33, true)
	return int64(v), err
}

func (r *reader) s64() (int64, error) {
	v, err := r.leb(64, true)
	return int64(v), err
}

// count reads the length of a vector whose elements take at least minSize
// bytes each. It checks the length against the limit (named limitName;
// max is its value) and then against the bytes left, so that the caller
// may allocate the vector up front.
func (r *reader) count(what, limitName string, max, minSize int) (int, error) {
	at := r.off()
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if uint64(n) > uint64(max) {
		return 0, r.overLimit(at, limitName, what, uint64(n), max)
	}
	if uint64(n)*uint64(minSize) > uint64(r.left()) {
		return 0, r.failAt(at, "%s %d is more than the %d bytes left can hold", what, n, r.left())
	}
	return int(n), nil
}

// name reads a name: a length-prefixed UTF-8 string.
func (r *reader) name(what string) (string, error) {
	at := r.off()
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	if uint64(n) > uint64(r.lim.MaxNameBytes) {
		return "", r.overLimit(at, "MaxNameBytes", what+" length", uint64(n), r.lim.MaxNameBytes)
	}
	b, err := r.bytes(int(n))
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", r.failAt(at, "%s is not valid UTF-8", what)
	}
	return string(b), nil
}

// within puts the name of the item being read in front of the reason of
// err (a *FormatError) or the quantity of err (a *LimitError): "function
// 3: body does not end with an end opcode". Callers build the name only
// when there is an error, so reading a module allocates no names.
func within(err error, what string) error {
	switch e := err.(type) {
	case *FormatError:
		e.Reason = what + ": " + e.Reason
	case *LimitError:
		e.What = what + " " + e.What
	}
	return err
}
