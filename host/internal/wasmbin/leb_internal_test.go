package wasmbin

import (
	"errors"
	"strings"
	"testing"
)

func TestLEB(t *testing.T) {
	tests := []struct {
		name   string
		bits   int
		signed bool
		in     []byte
		want   uint64 // for signed reads, the value sign-extended to 64 bits
		err    string // a part of the reason, or "" for success
	}{
		{"u32 0", 32, false, []byte{0x00}, 0, ""},
		{"u32 127", 32, false, []byte{0x7F}, 127, ""},
		{"u32 128", 32, false, []byte{0x80, 0x01}, 128, ""},
		{"u32 padded 0", 32, false, []byte{0x80, 0x80, 0x80, 0x80, 0x00}, 0, ""},
		{"u32 padded 3", 32, false, []byte{0x83, 0x80, 0x00}, 3, ""},
		{"u32 max", 32, false, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x0F}, 0xFFFFFFFF, ""},
		{"u32 too large", 32, false, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x1F}, 0, "integer too large for 32 bits"},
		{"u32 unused bit", 32, false, []byte{0x80, 0x80, 0x80, 0x80, 0x40}, 0, "integer too large"},
		{"u32 too long", 32, false, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, "integer representation too long"},
		{"u32 truncated", 32, false, []byte{0x80, 0x80}, 0, "unexpected end"},
		{"u32 empty", 32, false, nil, 0, "unexpected end"},

		{"u64 max", 64, false, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}, ^uint64(0), ""},
		{"u64 too large", 64, false, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02}, 0, "integer too large for 64 bits"},
		{"u64 too long", 64, false, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, "too long"},

		{"s32 0", 32, true, []byte{0x00}, 0, ""},
		{"s32 -1", 32, true, []byte{0x7F}, ^uint64(0), ""},
		{"s32 63", 32, true, []byte{0x3F}, 63, ""},
		{"s32 64", 32, true, []byte{0xC0, 0x00}, 64, ""},
		{"s32 -64", 32, true, []byte{0x40}, ^uint64(63), ""},
		{"s32 -1 padded", 32, true, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x7F}, ^uint64(0), ""},
		{"s32 max", 32, true, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x07}, 0x7FFFFFFF, ""},
		{"s32 min", 32, true, []byte{0x80, 0x80, 0x80, 0x80, 0x78}, uint64(0xFFFFFFFF80000000), ""},
		{"s32 above max", 32, true, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x0F}, 0, "integer too large for 32 bits"},
		{"s32 below min", 32, true, []byte{0x80, 0x80, 0x80, 0x80, 0x70}, 0, "integer too large for 32 bits"},
		{"s32 too long", 32, true, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F}, 0, "too long"},

		{"s33 type index max", 33, true, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x0F}, 0xFFFFFFFF, ""},
		{"s33 min", 33, true, []byte{0x80, 0x80, 0x80, 0x80, 0x70}, uint64(0xFFFFFFFF00000000), ""},
		{"s33 too large", 33, true, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0x1F}, 0, "integer too large for 33 bits"},
		{"s33 func", 33, true, []byte{0x70}, ^uint64(15), ""},

		{"s64 max", 64, true, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00}, 1<<63 - 1, ""},
		{"s64 min", 64, true, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7F}, 1 << 63, ""},
		{"s64 above max", 64, true, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}, 0, "integer too large for 64 bits"},
		{"s64 below min", 64, true, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7E}, 0, "integer too large for 64 bits"},
		{"s64 too long", 64, true, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0, "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &reader{buf: tt.in, base: 100, section: "type"}
			got, err := r.leb(tt.bits, tt.signed)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("leb(% x) = %v", tt.in, err)
				}
				if got != tt.want {
					t.Fatalf("leb(% x) = %#x, want %#x", tt.in, got, tt.want)
				}
				if r.left() != 0 {
					t.Fatalf("leb(% x) left %d bytes", tt.in, r.left())
				}
				return
			}
			var fe *FormatError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("leb(% x) = %#x, %v; want a FormatError", tt.in, got, err)
			}
			if !strings.Contains(fe.Reason, tt.err) {
				t.Fatalf("reason %q, want %q", fe.Reason, tt.err)
			}
			if fe.Section != "type" || fe.Offset < 100 || fe.Offset > 100+int64(len(tt.in)) {
				t.Fatalf("error at %s %d", fe.Section, fe.Offset)
			}
		})
	}
}

// TestLEBRoundTrip decodes the shortest encodings of many values.
func TestLEBRoundTrip(t *testing.T) {
	sleb := func(v int64) []byte {
		var out []byte
		for {
			b := byte(v & 0x7F)
			v >>= 7
			if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
				return append(out, b)
			}
			out = append(out, b|0x80)
		}
	}
	for _, v := range []int64{0, 1, -1, 63, 64, -64, -65, 1<<31 - 1, -1 << 31, 1<<32 - 1, -1 << 32, 1<<63 - 1, -1 << 63} {
		r := &reader{buf: sleb(v)}
		got, err := r.s64()
		if err != nil || got != v {
			t.Errorf("s64(%d) = %d, %v", v, got, err)
		}
		r = &reader{buf: sleb(v)}
		got32, err := r.s32()
		if fits := v >= -1<<31 && v < 1<<31; fits != (err == nil) || (fits && int64(got32) != v) {
			t.Errorf("s32(%d) = %d, %v", v, got32, err)
		}
		r = &reader{buf: sleb(v)}
		got33, err := r.s33()
		if fits := v >= -1<<32 && v < 1<<32; fits != (err == nil) || (fits && got33 != v) {
			t.Errorf("s33(%d) = %d, %v", v, got33, err)
		}
	}
}

func TestLimitsWithDefaults(t *testing.T) {
	if got := (Limits{}).withDefaults(); got != DefaultLimits() {
		t.Fatalf("Limits{}.withDefaults() = %+v", got)
	}
	l := Limits{MaxImports: 5, MaxExports: -1}.withDefaults()
	if l.MaxImports != 5 || l.MaxExports != DefaultLimits().MaxExports {
		t.Fatalf("withDefaults kept %d imports, %d exports", l.MaxImports, l.MaxExports)
	}
}

func TestQuote(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes
	q := quote(long)
	if !strings.HasSuffix(q, "...") {
		t.Fatalf("quote(long) = %s", q)
	}
	if len(q) > maxQuoted+5 || strings.Contains(q, `\x`) {
		t.Fatalf("quote(long) = %s: cut inside a rune or too long", q)
	}
	if got := quote("a\nb"); got != `"a\nb"` {
		t.Fatalf("quote = %s", got)
	}
}
