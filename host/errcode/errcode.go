package errcode

import (
	"errors"
	"regexp"
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
	return &Sentinel{code: code, msg: msg}
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
