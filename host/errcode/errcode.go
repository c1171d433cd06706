package errcode

import (
	"errors"
	"regexp"
	"sort"
	"sync"
)

// Internal is the code reported for an error that carries no code of its own.
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

var codeRE = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// New returns a sentinel with the given code and message. It panics when the
// code is not snake_case: codes are fixed at compile time, so a bad one is a
// programming error.
func New(code, msg string) *Sentinel {
	if !codeRE.MatchString(code) {
		panic("errcode: code " + code + " is not snake_case")
	}
	s := &Sentinel{code: code, msg: msg}
	registry.Lock()
	registry.all = append(registry.all, s)
	registry.Unlock()
	return s
}

// registry records every sentinel created with New, so that the CLI and the
// API documentation can list every code the program can report.
var registry struct {
	sync.Mutex
	all []*Sentinel
}

// Entry describes one registered code.
type Entry struct {
	Code     string   `json:"code"`
	Messages []string `json:"messages"` // the messages of every sentinel with this code
}

// All returns every code registered by the packages linked into the
// program, sorted by code. Several sentinels may share a code (a timeout is
// a timeout wherever it happens); their messages are listed together.
func All() []Entry {
	registry.Lock()
	defer registry.Unlock()
	byCode := map[string]*Entry{}
	for _, s := range registry.all {
		e, ok := byCode[s.code]
		if !ok {
			e = &Entry{Code: s.code}
			byCode[s.code] = e
		}
		e.Messages = append(e.Messages, s.msg)
	}
	out := make([]Entry, 0, len(byCode))
	for _, e := range byCode {
		sort.Strings(e.Messages)
		out = append(out, *e)
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

// Lookup returns the first registered sentinel with code, nil when no linked
// package registered it. Clients of a remote API use it to turn a code back
// into the sentinel callers compare with errors.Is.
func Lookup(code string) *Sentinel {
	registry.Lock()
	defer registry.Unlock()
	for _, s := range registry.all {
		if s.code == code {
			return s
		}
	}
	return nil
}
