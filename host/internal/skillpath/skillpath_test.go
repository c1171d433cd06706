package skillpath_test

import (
	"errors"
	"testing"

	"github.com/palyra-go/palyra/host/internal/skillpath"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		raw, want string
		ok        bool
	}{
		{"modules/module.wasm", "modules/module.wasm", true},
		{"  assets\\prompt.txt ", "assets/prompt.txt", true},
		{"skills/*", "skills/*", true},
		{"skills/cache", "skills/cache", true},
		{"", "", false},
		{"   ", "", false},
		{"/etc/passwd", "", false},
		{"\\abs", "", false},
		{"a\x00b", "", false},
		{"c:temp", "", false},
		{"a//b", "", false},
		{"a/", "", false},
		{"./a", "", false},
		{"../*", "", false},
		{"*//foo", "", false},
		{"skills//*/data", "", false},
		{"a/../b", "", false},
		{"a/..", "", false},
	}
	for _, tt := range tests {
		got, err := skillpath.Normalize(tt.raw)
		if tt.ok {
			if err != nil || got != tt.want {
				t.Errorf("Normalize(%q) = %q, %v; want %q", tt.raw, got, err, tt.want)
			}
			continue
		}
		var pe *skillpath.Error
		if !errors.Is(err, skillpath.ErrInvalid) || !errors.As(err, &pe) || pe.Raw != tt.raw {
			t.Errorf("Normalize(%q) error = %v; want *Error wrapping ErrInvalid", tt.raw, err)
		}
	}
}
