// Package tomltext holds what the host's TOML configuration files share: a
// duration written as Go duration text ("30s", "6h"), and the wording of a
// decode error that names the key and the line it is on. go-toml does not
// put the key in the text of an error a field's UnmarshalText returns, so
// the decoders add it here, once, for every field.
package tomltext

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Duration is a time.Duration written in TOML as a Go duration string.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"30s\", \"5m\" or \"6h\"", s)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Describe words a TOML decode error: "unknown key: ..." for a key the
// target does not have, "key a.b (line 3, column 5): ..." when go-toml
// knows where, else the error's own text.
func Describe(err error) string {
	var sm *toml.StrictMissingError
	if errors.As(err, &sm) {
		return "unknown key: " + strings.TrimSpace(sm.String())
	}
	msg := strings.TrimPrefix(err.Error(), "toml: ")
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		if k := de.Key(); len(k) > 0 {
			return fmt.Sprintf("key %s (line %d, column %d): %s", strings.Join(k, "."), line, col, msg)
		}
		return fmt.Sprintf("line %d, column %d: %s", line, col, msg)
	}
	return msg
}
