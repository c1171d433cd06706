package errcode_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
)

var errThing = errcode.New("thing_failed", "thing failed")

type fieldErr struct {
	path string
	err  error
}

func (e *fieldErr) Error() string { return e.path + ": " + e.err.Error() }
func (e *fieldErr) Unwrap() error { return e.err }

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"plain", errors.New("x"), errcode.Internal},
		{"sentinel", errThing, "thing_failed"},
		{"wrapped", fmt.Errorf("ctx: %w", errThing), "thing_failed"},
		{"typed", &fieldErr{"a.b", fmt.Errorf("%w: detail", errThing)}, "thing_failed"},
		{"joined", errors.Join(errors.New("x"), errThing), "thing_failed"},
		{"shared", fmt.Errorf("call: %w", errcode.ErrTimeout), "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errcode.Of(tt.err); got != tt.want {
				t.Fatalf("Of() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestNewPanics checks every refusal of New, and that a refused sentinel
// is not registered.
func TestNewPanics(t *testing.T) {
	tests := []struct {
		name, code, msg, want string
	}{
		{"empty code", "", "m", "not snake_case"},
		{"upper case", "Bad", "m", "not snake_case"},
		{"dash", "bad-code", "m", "not snake_case"},
		{"leading underscore", "_x", "m", "not snake_case"},
		{"trailing underscore", "x_", "m", "not snake_case"},
		{"internal", errcode.Internal, "m", "reserved"},
		{"duplicate", "thing_failed", "thing failed again", "already registered"},
		{"duplicate shared", "timeout", "timed out", "already registered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tt.want) {
					t.Errorf("New(%q, %q) panicked with %v, want %q", tt.code, tt.msg, r, tt.want)
				}
				if tt.want != "already registered" {
					if s := errcode.Lookup(tt.code); s != nil {
						t.Errorf("refused code %q is registered", tt.code)
					}
				}
			}()
			errcode.New(tt.code, tt.msg)
		})
	}
}

func TestAllHasOneMessagePerCode(t *testing.T) {
	all := errcode.All()
	var found *errcode.Entry
	for i := range all {
		if i > 0 && all[i-1].Code >= all[i].Code {
			t.Fatalf("All() not sorted or has duplicates at %d: %q, %q", i, all[i-1].Code, all[i].Code)
		}
		if all[i].Code == "thing_failed" {
			found = &all[i]
		}
		if s := errcode.Lookup(all[i].Code); s == nil || s.Error() != all[i].Message {
			t.Errorf("Lookup(%q) = %v, want the sentinel with message %q", all[i].Code, s, all[i].Message)
		}
	}
	if found == nil || found.Message != "thing failed" {
		t.Fatalf("thing_failed entry = %+v", found)
	}
	if s := errcode.Lookup("no_such_code_anywhere"); s != nil {
		t.Errorf("Lookup of an unknown code = %v", s)
	}
}

func ExampleOf() {
	err := fmt.Errorf("call acme.echo: %w", errcode.ErrTimeout)
	fmt.Println(errcode.Of(err), errors.Is(err, errcode.ErrTimeout))
	// Output: timeout true
}

func ExampleNew() {
	// In a package's errors.go: the message states the failure; the
	// context added where it is returned names where.
	errLocked := errcode.New("example_locked", "example store is locked")
	err := fmt.Errorf("put acme.echo: %w", errLocked)
	fmt.Println(err, "/", errcode.Of(err))
	// Output: put acme.echo: example store is locked / example_locked
}
