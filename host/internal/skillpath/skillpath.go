package skillpath

import (
	"fmt"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
)

// ErrInvalid is the sentinel of every path that breaks the rule.
var ErrInvalid = errcode.New("invalid_artifact_path", "invalid artifact path")

// Error reports a path that breaks the rule: the raw path as given and why.
type Error struct {
	Raw    string // the path as it was given
	Reason string // what is wrong with it
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("%s %q: %s", ErrInvalid.Error(), e.Raw, e.Reason)
}

// Unwrap returns ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }

// Normalize applies Palyra's artifact path rule: it trims surrounding
// white space and turns '\' into '/', then rejects an empty path, a leading
// '/', NUL, ':' anywhere, and any empty, "." or ".." segment. The result is
// the normalized path; a failure is an *Error wrapping ErrInvalid.
func Normalize(raw string) (string, error) {
	p := strings.ReplaceAll(strings.TrimSpace(raw), `\`, "/")
	bad := func(reason string) (string, error) { return "", &Error{Raw: raw, Reason: reason} }
	switch {
	case p == "":
		return bad("empty path")
	case strings.HasPrefix(p, "/"):
		return bad("absolute path")
	case strings.ContainsRune(p, 0):
		return bad("contains NUL")
	case strings.ContainsRune(p, ':'):
		return bad("contains ':'")
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "":
			return bad("empty path segment")
		case ".", "..":
			return bad(fmt.Sprintf("path segment %q", seg))
		}
	}
	return p, nil
}
