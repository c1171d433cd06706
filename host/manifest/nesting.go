package manifest

import "fmt"

// MaxNesting is the deepest a manifest may nest: the most parts a dotted key
// or table header may have, the deepest arrays and inline tables may nest,
// and the deepest a tool schema may be. Real manifests stay far below it.
// It is checked before the TOML decoder runs, because the decoder's time
// grows with the square of a dotted key's length: a hostile 1 MiB key would
// take minutes.
const MaxNesting = 128

// checkNesting scans data once, without decoding it, for a dotted key (or
// table header) of more than MaxNesting parts and for arrays and inline
// tables nested more than MaxNesting deep. It understands TOML strings and
// comments well enough never to count their contents; a chain of
// dot-separated atoms outside them longer than a float's is a key.
func checkNesting(data []byte) *FieldError {
	chain, depth := 0, 0
	afterAtom, pendingDot := false, false
	reset := func() { chain, afterAtom, pendingDot = 0, false, false }
	tooDeep := func(i int, what string) *FieldError {
		line, col := lineCol(data, i)
		return &FieldError{
			Line: line, Column: col, Err: ErrParse,
			Reason: fmt.Sprintf("%s nested more than %d levels deep at line %d, column %d", what, MaxNesting, line, col),
		}
	}
	for i := 0; i < len(data); i++ {
		start := i
		switch c := data[i]; {
		case c == '#':
			for i+1 < len(data) && data[i+1] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			i = skipString(data, i) - 1
			fallthrough
		case isBareKeyByte(c):
			for c != '"' && c != '\'' && i+1 < len(data) && isBareKeyByte(data[i+1]) {
				i++
			}
			if pendingDot {
				chain++
			} else {
				chain = 1
			}
			afterAtom, pendingDot = true, false
			if chain > MaxNesting {
				return tooDeep(start, "key")
			}
		case c == '.':
			if afterAtom {
				afterAtom, pendingDot = false, true
			} else {
				reset()
			}
		case c == ' ' || c == '\t':
			// White space may surround the dots of a dotted key.
		case c == '[' || c == '{':
			reset()
			if depth++; depth > MaxNesting+2 { // +2: a [[header]] opens two
				return tooDeep(i, "arrays and inline tables")
			}
		case c == ']' || c == '}':
			reset()
			depth--
		default:
			reset()
		}
	}
	return nil
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// skipString returns the offset just past the TOML string that starts at
// data[i] (a quote), or the end of the line or input when it is not closed.
func skipString(data []byte, i int) int {
	q := data[i]
	basic := q == '"'
	if i+2 < len(data) && data[i+1] == q && data[i+2] == q { // multi-line
		for j := i + 3; j < len(data); j++ {
			switch {
			case basic && data[j] == '\\':
				j++
			case data[j] == q && j+2 < len(data) && data[j+1] == q && data[j+2] == q:
				end := j + 3
				for k := 0; k < 2 && end < len(data) && data[end] == q; k++ {
					end++ // up to two quotes may end the content
				}
				return end
			}
		}
		return len(data)
	}
	for j := i + 1; j < len(data); j++ {
		switch {
		case basic && data[j] == '\\':
			j++
		case data[j] == q:
			return j + 1
		case data[j] == '\n':
			return j
		}
	}
	return len(data)
}
