package tomltext_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/palyra-go/palyra/host/internal/tomltext"
)

type conf struct {
	Every tomltext.Duration `toml:"every"`
	Sub   struct {
		Window tomltext.Duration `toml:"window"`
	} `toml:"sub"`
}

func decode(s string) (conf, error) {
	var c conf
	dec := toml.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	return c, dec.Decode(&c)
}

func TestDurationAndDescribe(t *testing.T) {
	c, err := decode("every = \" 6h \"\n[sub]\nwindow = \"5m\"\n")
	if err != nil || c.Every.Duration != 6*time.Hour || c.Sub.Window.Duration != 5*time.Minute {
		t.Fatalf("decode: %+v %v", c, err)
	}
	if b, err := toml.Marshal(c); err != nil || !strings.Contains(string(b), "every = '6h0m0s'") {
		t.Fatalf("marshal: %s %v", b, err)
	}
	for _, tt := range []struct{ in, want string }{
		{"[sub]\nwindow = \"five minutes\"\n", `key sub.window (line 2, column 10): "five minutes" is not a duration such as "30s", "5m" or "6h"`},
		{"surprise = 1\n", "unknown key: "},
		{"every = \n", "line 1"},
	} {
		_, err := decode(tt.in)
		if err == nil {
			t.Fatalf("%q: no error", tt.in)
		}
		if got := tomltext.Describe(err); !strings.Contains(got, tt.want) {
			t.Errorf("%q: %q, want it to contain %q", tt.in, got, tt.want)
		}
	}
}
