package skill

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The input document (sdk/ABI.md §3) is decoded by hand, without
// reflection. Every call runs in a fresh instance, so encoding/json would
// rebuild its per-type caches on every call: profiling the echo example
// showed that decoding this one document that way cost about 1.2 million
// guest instructions per call, three quarters of the whole call. This
// decoder does the same work in a few thousand.
//
// It accepts exactly RFC 8259 JSON: anything json.Valid rejects is an
// error, naming the byte offset. Unknown members are skipped (later ABI
// minor versions may add some), a member given twice keeps its last value,
// null leaves a member at its zero value, and invalid UTF-8 in strings
// becomes U+FFFD, as with encoding/json. Member names match exactly
// (encoding/json would also accept other cases).

// envelopeError is a syntax or type error at byte offset off.
type envelopeError struct {
	off int
	msg string
}

func (e *envelopeError) Error() string {
	return fmt.Sprintf("input document: %s at byte %d", e.msg, e.off)
}

// maxEnvelopeDepth bounds the nesting of the document, input included
// (encoding/json's own limit is 10000).
const maxEnvelopeDepth = 10000

// envelope is the decoder's state: the document and the read offset.
type envelope struct {
	b     []byte
	i     int
	depth int
}

// parseInputDocument decodes the input document b.
func parseInputDocument(b []byte) (*inputDocument, error) {
	d := &envelope{b: b}
	doc := &inputDocument{}
	d.ws()
	err := d.object(func(key []byte) error {
		switch string(key) {
		case "abi":
			return d.stringInto(&doc.ABI)
		case "invocation_id":
			return d.stringInto(&doc.InvocationID)
		case "skill_id":
			return d.stringInto(&doc.SkillID)
		case "tool_id":
			return d.stringInto(&doc.ToolID)
		case "input":
			start := d.i
			if err := d.skip(); err != nil {
				return err
			}
			doc.Input = json.RawMessage(append([]byte(nil), d.b[start:d.i]...))
			return nil
		case "grants":
			return d.grants(&doc.Grants)
		case "deadline_unix_ms":
			return d.intInto(&doc.DeadlineUnixMS, 64)
		}
		return d.skip()
	})
	if err != nil {
		return nil, err
	}
	d.ws()
	if d.i != len(d.b) {
		return nil, d.errorf("data after the document")
	}
	return doc, nil
}

func (d *envelope) errorf(format string, args ...any) error {
	return &envelopeError{off: d.i, msg: fmt.Sprintf(format, args...)}
}

// ws skips white space.
func (d *envelope) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// null consumes a null literal if one is next.
func (d *envelope) null() bool {
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// object decodes an object (or null), calling member for each member with
// the read offset on its value.
func (d *envelope) object(member func(key []byte) error) error {
	return d.container('{', '}', "object", func() error {
		key, err := d.str()
		if err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return d.errorf("want ':' after a member name")
		}
		d.i++
		d.ws()
		return member(key)
	})
}

// array decodes an array (or null), calling elem for each element.
func (d *envelope) array(elem func() error) error {
	return d.container('[', ']', "array", elem)
}

// container decodes an object or an array (or null) between open and
// close, calling item for each member or element.
func (d *envelope) container(open, close byte, kind string, item func() error) error {
	if d.null() {
		return nil
	}
	if d.i >= len(d.b) || d.b[d.i] != open {
		return d.errorf("want an %s", kind)
	}
	if d.depth++; d.depth > maxEnvelopeDepth {
		return d.errorf("nested deeper than %d", maxEnvelopeDepth)
	}
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == close {
		d.i++
		d.depth--
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		d.ws()
		if d.i >= len(d.b) {
			return d.errorf("unterminated %s", kind)
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.ws()
		case close:
			d.i++
			d.depth--
			return nil
		default:
			return d.errorf("want ',' or '%c' in an %s", close, kind)
		}
	}
}

// stringInto decodes a string (or null) into *s.
func (d *envelope) stringInto(s *string) error {
	if d.null() {
		return nil
	}
	b, err := d.str()
	if err != nil {
		return err
	}
	*s = string(b)
	return nil
}

// str decodes a string. The result aliases d.b when the string has no
// escape and is valid UTF-8.
func (d *envelope) str() ([]byte, error) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, d.errorf("want a string")
	}
	d.i++
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, nil
		case c == '\\' || c >= utf8.RuneSelf:
			return d.strSlow(start)
		case c < 0x20:
			return nil, d.errorf("control character in a string")
		}
		d.i++
	}
	return nil, d.errorf("unterminated string")
}

// strSlow decodes the rest of a string that has escapes or non-ASCII
// bytes, from start (just after the opening quote) with d.i at the first
// such byte.
func (d *envelope) strSlow(start int) ([]byte, error) {
	out := append([]byte(nil), d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return out, nil
		case c < 0x20:
			return nil, d.errorf("control character in a string")
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return nil, d.errorf("unterminated string")
			}
			e := d.b[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, err := d.hex4()
				if err != nil {
					return nil, err
				}
				if utf16.IsSurrogate(r) {
					r2 := utf8.RuneError
					if len(d.b)-d.i >= 6 && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
						save := d.i
						d.i += 2
						lo, err := d.hex4()
						if err != nil {
							return nil, err
						}
						if r2 = utf16.DecodeRune(r, lo); r2 == utf8.RuneError {
							d.i = save // not a pair: the second escape stands alone
						}
					}
					r = r2
				}
				out = utf8.AppendRune(out, r)
			default:
				d.i -= 2
				return nil, d.errorf("invalid escape in a string")
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			d.i++
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			out = utf8.AppendRune(out, r) // RuneError for invalid UTF-8, as encoding/json
			d.i += size
		}
	}
	return nil, d.errorf("unterminated string")
}

// hex4 decodes the four hex digits of a \u escape.
func (d *envelope) hex4() (rune, error) {
	if len(d.b)-d.i < 4 {
		return 0, d.errorf("short \\u escape")
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, d.errorf("invalid \\u escape")
		}
	}
	d.i += 4
	return r, nil
}

// number consumes a JSON number and returns its text.
func (d *envelope) number() ([]byte, error) {
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.b) && d.b[d.i] == '0':
		d.i++
	case d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9':
		d.digits()
	default:
		return nil, d.errorf("invalid number")
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if d.digits() == 0 {
			return nil, d.errorf("invalid number")
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if d.digits() == 0 {
			return nil, d.errorf("invalid number")
		}
	}
	return d.b[start:d.i], nil
}

func (d *envelope) digits() int {
	n := 0
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
		n++
	}
	return n
}

// intInto decodes an integer of bits bits (or null) into *v.
func (d *envelope) intInto(v *int64, bits int) error {
	if d.null() {
		return nil
	}
	start := d.i
	num, err := d.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(string(num), 10, bits)
	if err != nil {
		d.i = start
		return d.errorf("%s is not an int%d", num, bits)
	}
	*v = n
	return nil
}

// handleInto decodes a grant handle (an int32, or null) into *h.
func (d *envelope) handleInto(h *int32) error {
	var v int64
	if err := d.intInto(&v, 32); err != nil {
		return err
	}
	*h = int32(v)
	return nil
}

// skip consumes one value of any type, checking its syntax.
func (d *envelope) skip() error {
	if d.i >= len(d.b) {
		return d.errorf("want a value")
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(func([]byte) error { return d.skip() })
	case c == '[':
		return d.array(d.skip)
	case c == '"':
		_, err := d.str()
		return err
	case c == '-' || c >= '0' && c <= '9':
		_, err := d.number()
		return err
	}
	for _, lit := range []string{"true", "false", "null"} {
		if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
			d.i += len(lit)
			return nil
		}
	}
	return d.errorf("invalid value")
}

// grants decodes the grants object.
func (d *envelope) grants(g *Grants) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "http":
			return grantList(d, &g.HTTP, func(gr *HTTPGrant) (*int32, string, *string) { return &gr.Handle, "host", &gr.Host })
		case "secrets":
			return grantList(d, &g.Secrets, func(gr *SecretGrant) (*int32, string, *string) { return &gr.Handle, "key", &gr.Key })
		case "storage":
			return grantList(d, &g.Storage, func(gr *StorageGrant) (*int32, string, *string) { return &gr.Handle, "prefix", &gr.Prefix })
		case "channels":
			return grantList(d, &g.Channels, func(gr *ChannelGrant) (*int32, string, *string) { return &gr.Handle, "channel", &gr.Channel })
		}
		return d.skip()
	})
}

// grantList decodes an array of grants (or null) into *list; fields
// returns where a grant's handle and its one named string go.
func grantList[T any](d *envelope, list *[]T, fields func(*T) (handle *int32, name string, value *string)) error {
	if d.null() {
		*list = nil
		return nil
	}
	*list = []T{}
	return d.array(func() error {
		var gr T
		h, name, v := fields(&gr)
		if err := d.grant(h, name, v); err != nil {
			return err
		}
		*list = append(*list, gr)
		return nil
	})
}

// grant decodes one grant object: {"handle": n, "<name>": "..."}.
func (d *envelope) grant(handle *int32, name string, value *string) error {
	return d.object(func(key []byte) error {
		switch string(key) {
		case "handle":
			return d.handleInto(handle)
		case name:
			return d.stringInto(value)
		}
		return d.skip()
	})
}
