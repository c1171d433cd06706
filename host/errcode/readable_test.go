package errcode_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
)

// codedText is a Coder whose text is its own, not a sentinel's.
type codedText struct{ text string }

func (e *codedText) Error() string { return e.text }
func (e *codedText) Code() string  { return "thing_failed" }

// TestReadable: the readable part starts at the code's sentence, drops
// the wrappers' context before it, and keeps the specifics after it.
func TestReadable(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"bare sentinel", errThing, "thing failed"},
		{"specifics kept", fmt.Errorf("%w: a.b 1.0.0", errThing), "thing failed: a.b 1.0.0"},
		{"package prefixes dropped", fmt.Errorf("install: %w", fmt.Errorf("inventory: %w: a.b", errThing)), "thing failed: a.b"},
		{"context with a subject dropped", fmt.Errorf("enable a.b 1.0.0: %w", errThing), "thing failed"},
		{"sentence inside a word is no boundary", fmt.Errorf("something failed: %w", errThing), "thing failed"},
		{"typed wrapper", &fieldErr{path: "manifest", err: fmt.Errorf("%w: x", errThing)}, "thing failed: x"},
		{"coder text not in the chain", &fieldErr{path: "install", err: errors.Join(&codedText{text: "x"})}, "x"},
		{"typed coder", fmt.Errorf("client: %w", &codedText{text: "gone away"}), "gone away"},
		{"no code: whole", errors.New("install: open /x: permission denied"), "install: open /x: permission denied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := errcode.Readable(tc.err); got != tc.want {
				t.Errorf("Readable(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}
