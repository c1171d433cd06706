package a2ui

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeJSON decodes data strictly into a tree of nil, bool, string,
// json.Number, []any and map[string]any. It refuses what encoding/json lets
// through or what a JavaScript client would read differently: invalid UTF-8,
// duplicate object keys, numbers beyond float64 (JavaScript's Infinity),
// nesting deeper than MaxJSONDepth and data after the value. Errors point at
// the value being read; a syntax error gives the byte offset.
func (c errs) decodeJSON(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, c.invalid("", "not valid UTF-8")
	}
	if !json.Valid(data) {
		// Unmarshal stops at the same syntax check and says where.
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, c.invalid("", "invalid JSON: %s (at byte %d)", se.Error(), se.Offset)
		}
		return nil, c.invalid("", "invalid JSON")
	}
	p := treeParser{errs: c, data: data}
	return p.value(0)
}

// treeParser builds the tree of JSON that json.Valid has accepted, so it
// need not check the grammar: only the rules JSON itself does not have.
type treeParser struct {
	errs
	data []byte
	i    int
	// at is the location of the value being read: object keys, and array
	// indexes as index >= 0. It becomes a JSON Pointer only for an error.
	at []step
}

type step struct {
	key   string
	index int // -1 for a key
}

func (p *treeParser) path() string {
	s := ""
	for _, st := range p.at {
		if st.index >= 0 {
			s = ptrIndex(s, st.index)
		} else {
			s = ptr(s, st.key)
		}
	}
	return s
}

func (p *treeParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *treeParser) value(depth int) (any, error) {
	p.space()
	switch p.data[p.i] {
	case '{':
		if depth+1 > MaxJSONDepth {
			return nil, p.limit(p.path(), "nesting depth", MaxJSONDepth, depth+1)
		}
		p.i++
		m := map[string]any{}
		for {
			p.space()
			if p.data[p.i] == '}' {
				p.i++
				return m, nil
			}
			if p.data[p.i] == ',' {
				p.i++
				p.space()
			}
			key := p.str()
			p.at = append(p.at, step{key: key, index: -1})
			if _, dup := m[key]; dup {
				return nil, p.invalid(p.path(), "duplicate key")
			}
			p.space()
			p.i++ // ':'
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			p.at = p.at[:len(p.at)-1]
			m[key] = v
		}
	case '[':
		if depth+1 > MaxJSONDepth {
			return nil, p.limit(p.path(), "nesting depth", MaxJSONDepth, depth+1)
		}
		p.i++
		a := []any{}
		for {
			p.space()
			if p.data[p.i] == ']' {
				p.i++
				return a, nil
			}
			if p.data[p.i] == ',' {
				p.i++
			}
			p.at = append(p.at, step{index: len(a)})
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			p.at = p.at[:len(p.at)-1]
			a = append(a, v)
		}
	case '"':
		return p.str(), nil
	case 't':
		p.i += 4
		return true, nil
	case 'f':
		p.i += 5
		return false, nil
	case 'n':
		p.i += 4
		return nil, nil
	}
	start := p.i
	for p.i < len(p.data) && strings.IndexByte("+-0123456789.eE", p.data[p.i]) >= 0 {
		p.i++
	}
	n := json.Number(p.data[start:p.i])
	if f, err := strconv.ParseFloat(string(n), 64); err != nil && math.IsInf(f, 0) {
		return nil, p.invalid(p.path(), "number %s is beyond the range of a float64", quote(string(n)))
	}
	return n, nil
}

// str reads the string at p.i; only strings with escapes go through
// encoding/json.
func (p *treeParser) str() string {
	start, esc := p.i, false
	for p.i++; p.data[p.i] != '"'; p.i++ {
		if p.data[p.i] == '\\' {
			esc = true
			p.i++
		}
	}
	p.i++
	raw := p.data[start:p.i]
	if !esc {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s) // a valid JSON string literal
	return s
}

// kindOf names the JSON type of a decoded value for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

// float returns the value of a decoded number (finite, decodeJSON checked).
func float(n json.Number) float64 {
	f, _ := strconv.ParseFloat(string(n), 64)
	return f
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// ptr appends the reference token key to the JSON Pointer parent.
func ptr(parent, key string) string {
	return parent + "/" + pointerEscaper.Replace(key)
}

// ptrIndex appends an array index to the JSON Pointer parent.
func ptrIndex(parent string, i int) string {
	return parent + "/" + strconv.Itoa(i)
}

// jsLen is the length of s as JavaScript counts it: UTF-16 code units.
func jsLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// badIDChar returns the first rune of s outside [A-Za-z0-9:_-] (plus '.'
// when dot), or -1.
func badIDChar(s string, dot bool) rune {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ':' || r == '_' || r == '-' || dot && r == '.') {
			return r
		}
	}
	return -1
}

// valueDepth is the nesting depth of a decoded value: 0 for a scalar, 1 for
// an array or object of scalars, and so on.
func valueDepth(v any) int {
	d := 0
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			d = max(d, valueDepth(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range t {
			d = max(d, valueDepth(e))
		}
		return d + 1
	}
	return 0
}

// plain converts a decoded value for the typed document: numbers become
// float64, as in JavaScript.
func plain(v any) any {
	switch t := v.(type) {
	case json.Number:
		return float(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = plain(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = plain(e)
		}
		return out
	}
	return v
}
