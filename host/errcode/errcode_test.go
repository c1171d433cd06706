package errcode_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
)

var errThing = errcode.New("thing_failed", "pkg: thing failed")

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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errcode.Of(tt.err); got != tt.want {
				t.Fatalf("Of() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewRejectsBadCode(t *testing.T) {
	for _, code := range []string{"", "Bad", "bad-code", "_x", "x_"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%q) did not panic", code)
				}
			}()
			errcode.New(code, "m")
		}()
	}
}

func ExampleOf() {
	errNotFound := errcode.New("skill_not_found", "inventory: skill not found")
	err := fmt.Errorf("info acme.echo: %w", errNotFound)
	fmt.Println(errcode.Of(err), errors.Is(err, errNotFound))
	// Output: skill_not_found true
}

func TestAllListsRegisteredCodes(t *testing.T) {
	errcode.New("thing_failed", "other: thing failed too")
	var found *errcode.Entry
	all := errcode.All()
	for i := range all {
		if i > 0 && all[i-1].Code >= all[i].Code {
			t.Fatalf("All() not sorted or has duplicates at %d: %q, %q", i, all[i-1].Code, all[i].Code)
		}
		if all[i].Code == "thing_failed" {
			found = &all[i]
		}
	}
	if found == nil || len(found.Messages) != 2 {
		t.Fatalf("thing_failed entry = %+v, want two messages", found)
	}
}
