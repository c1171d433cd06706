package manifest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

func TestCheckCompat(t *testing.T) {
	base := string(readFixture(t, "good/minimal_v2.toml"))
	compat := func(s string) string {
		return strings.Replace(base, "required_protocol_major = 1\nmin_palyra_version = \"0.1.0\"\n", s, 1)
	}
	tests := []struct {
		name string
		text string
		path string // "" = compatible
		err  error
	}{
		{"current", base, "", nil},
		{"protocol 0", compat("required_protocol_major = 0\nmin_palyra_version = \"0.1.0\"\n"), "", nil},
		{"older min", compat("required_protocol_major = 1\nmin_palyra_version = \"0.0.1\"\n"), "", nil},
		{"leading zeros", compat("required_protocol_major = 1\nmin_palyra_version = \"00.01.00\"\n"), "", nil},
		{"max equal", compat("required_protocol_major = 1\nmin_palyra_version = \"0.1.0\"\nmax_palyra_version = \"0.1.0\"\n"), "", nil},
		{"legacy names", compat("min_protocol_major = 1\nmin_runtime_version = \"0.1.0\"\n"), "", nil},
		{"protocol 2", compat("required_protocol_major = 2\nmin_palyra_version = \"0.1.0\"\n"),
			"compat.required_protocol_major", manifest.ErrUnsupportedProtocolMajor},
		{"legacy protocol 2", compat("min_protocol_major = 2\nmin_palyra_version = \"0.1.0\"\n"),
			"compat.required_protocol_major", manifest.ErrUnsupportedProtocolMajor},
		{"newer min", compat("required_protocol_major = 1\nmin_palyra_version = \"0.2.0\"\n"),
			"compat.min_palyra_version", manifest.ErrUnsupportedRuntimeVersion},
		{"newer min patch", compat("required_protocol_major = 1\nmin_palyra_version = \"0.1.1\"\n"),
			"compat.min_palyra_version", manifest.ErrUnsupportedRuntimeVersion},
		{"older max", compat("required_protocol_major = 1\nmin_palyra_version = \"0.0.1\"\nmax_palyra_version = \"0.0.9\"\n"),
			"compat.max_palyra_version", manifest.ErrRuntimeVersionAboveMaximum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustParse(t, []byte(tt.text)) // Parse does not check compat
			err := manifest.CheckCompat(m)
			if tt.err == nil {
				if err != nil {
					t.Fatalf("CheckCompat: %v", err)
				}
				return
			}
			fe := fieldError(t, err)
			if fe.Path != tt.path || !errors.Is(err, tt.err) || errcode.Of(err) != errcode.Of(tt.err) {
				t.Fatalf("got %v (path %q), want %v at %q", err, fe.Path, tt.err, tt.path)
			}
			if errors.Is(err, manifest.ErrValidation) || errors.Is(err, manifest.ErrParse) {
				t.Fatalf("compat error %v also wraps a parse/validation sentinel", err)
			}
		})
	}
}

func TestSentinelCodes(t *testing.T) {
	for err, code := range map[error]string{
		manifest.ErrParse:                      "manifest_parse",
		manifest.ErrValidation:                 "manifest_validation",
		manifest.ErrUnsupportedProtocolMajor:   "unsupported_protocol_major",
		manifest.ErrUnsupportedRuntimeVersion:  "unsupported_runtime_version",
		manifest.ErrRuntimeVersionAboveMaximum: "runtime_version_above_supported_maximum",
		manifest.ErrInvalidVersion:             "invalid_version",
		manifest.ErrUnknownTool:                "unknown_tool",
		manifest.ErrInputSchema:                "invalid_input",
		manifest.ErrOutputSchema:               "invalid_output",
	} {
		if got := errcode.Of(err); got != code {
			t.Errorf("errcode.Of(%v) = %q, want %q", err, got, code)
		}
		if s := errcode.Lookup(code); s == nil || error(s) != err {
			t.Errorf("%v is not the one sentinel of %s", err, code)
		}
	}
}

func TestFieldErrorFormat(t *testing.T) {
	err := &manifest.FieldError{
		Path:   "entrypoints.tools[1].id",
		Reason: `must start with publisher prefix "acme."`,
		Err:    manifest.ErrValidation,
	}
	if got, want := err.Error(), `manifest: entrypoints.tools[1].id: must start with publisher prefix "acme."`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	whole := &manifest.FieldError{Reason: "not valid UTF-8 at line 1, column 2", Err: manifest.ErrParse}
	if got, want := whole.Error(), "manifest: not valid UTF-8 at line 1, column 2"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
