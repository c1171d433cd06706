package errcode

import (
	"errors"
	"sort"
	"sync"
)

// Internal is the code reported for an error that carries no code of its
// own. It has no sentinel, and New refuses it.
const Internal = "internal"

// Coder is implemented by errors that carry a stable code.
type Coder interface {
	error
	// Code returns the stable snake_case code of the error.
	Code() string
}

// Sentinel is an error value with a stable code. Sentinels are created once,
// at package initialisation, and compared with errors.Is.
type Sentinel struct {
	code string
	msg  string
}

// New returns the sentinel of code, with message msg. Call it once per code,
// in a package-level var block: it panics when code is not snake_case, is
// Internal or is already registered (see "One sentinel per code" in the
// package doc: re-export the existing sentinel instead). Codes are fixed at
// compile time, so each of these is a programming error, found when the
// program starts. msg follows the rule in "Messages" (a test checks every
// message of the repository).
func New(code, msg string) *Sentinel {
	if !snakeCase(code) {
		panic("errcode: code " + code + " is not snake_case")
	}
	if code == Internal {
		panic("errcode: code " + Internal + " is reserved for errors without a code")
	}
	s := &Sentinel{code: code, msg: msg}
	registry.Lock()
	defer registry.Unlock()
	if prev, ok := registry.byCode[code]; ok {
		panic("errcode: code " + code + " is already registered (" + quote(prev.msg) + "); re-export that sentinel instead")
	}
	registry.byCode[code] = s
	return s
}

func quote(s string) string { return `"` + s + `"` }

// registry records every sentinel created with New, so that the CLI and the
// API documentation can list every code the program can report, and remote
// errors can be turned back into sentinels.
var registry = struct {
	sync.Mutex
	byCode map[string]*Sentinel
}{byCode: map[string]*Sentinel{}}

// Entry describes one registered code.
type Entry struct {
	Code    string `json:"code"`
	Message string `json:"message"` // the message of the code's sentinel
}

// All returns every code registered by the packages linked into the
// program, with the message of its sentinel, sorted by code.
func All() []Entry {
	registry.Lock()
	defer registry.Unlock()
	out := make([]Entry, 0, len(registry.byCode))
	for code, s := range registry.byCode {
		out = append(out, Entry{Code: code, Message: s.msg})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}

// Error returns the sentinel's message.
func (s *Sentinel) Error() string { return s.msg }

// Code returns the sentinel's stable code.
func (s *Sentinel) Code() string { return s.code }

// Of returns the code of the first error in err's chain that carries one,
// Internal when none does, and "" for a nil error.
func Of(err error) string {
	if err == nil {
		return ""
	}
	var c Coder
	if errors.As(err, &c) {
		return c.Code()
	}
	return Internal
}

// Lookup returns the sentinel of code, nil when no linked package
// registered it. Errors that arrive as a code over a wire (from a sidecar,
// from the daemon) unwrap to it, so callers compare them with errors.Is as
// they would a local error.
func Lookup(code string) *Sentinel {
	registry.Lock()
	defer registry.Unlock()
	return registry.byCode[code]
}

// snakeCase reports whether code is snake_case: lower-case words of letters
// and digits, the first starting with a letter, joined by single
// underscores. (By hand rather than with regexp: every binary registers
// its codes at start-up, and the sidecar starts often.)
func snakeCase(code string) bool {
	if code == "" || code[0] < 'a' || code[0] > 'z' {
		return false
	}
	for i := 0; i < len(code); i++ {
		switch c := code[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '_' && i+1 < len(code) && code[i+1] != '_':
		default:
			return false
		}
	}
	return true
}
