package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// strictDecoder reads JSON through the token API so that the parsers of this
// package can reject what encoding/json's Unmarshal lets through: duplicate
// object keys (Unmarshal keeps the last one), null where a value is required
// and trailing data after the document.
type strictDecoder struct {
	dec *json.Decoder
}

func newStrictDecoder(data []byte) *strictDecoder {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return &strictDecoder{dec: dec}
}

// errorf returns an error that names the input offset.
func (d *strictDecoder) errorf(format string, args ...any) error {
	return fmt.Errorf("%s at offset %d", fmt.Sprintf(format, args...), d.dec.InputOffset())
}

func (d *strictDecoder) token() (json.Token, error) {
	tok, err := d.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, d.errorf("unexpected end of JSON")
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("invalid JSON at offset %d: %s", se.Offset, se.Error())
		}
		return nil, d.errorf("invalid JSON: %s", err.Error())
	}
	return tok, nil
}

// describe names a token's JSON type for error messages.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return "'" + v.String() + "'"
	}
	return fmt.Sprintf("%T", tok)
}

// object reads one JSON object and calls field for each key, with the decoder
// positioned at the key's value; field must consume that value. A repeated
// key is an error. what names the object in error messages.
func (d *strictDecoder) object(what string, field func(key string) error) error {
	tok, err := d.token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return d.errorf("%s must be an object, not %s", what, describe(tok))
	}
	seen := make(map[string]bool)
	for d.dec.More() {
		tok, err := d.token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return d.errorf("%s: expected a key, got %s", what, describe(tok))
		}
		if seen[key] {
			return d.errorf("%s: duplicate key %s", what, quote(key))
		}
		seen[key] = true
		if err := field(key); err != nil {
			return err
		}
	}
	_, err = d.token() // '}': Token has checked the syntax.
	return err
}

// array reads one JSON array and calls elem for each element, with the
// decoder positioned at the element.
func (d *strictDecoder) array(what string, elem func(i int) error) error {
	tok, err := d.token()
	if err != nil {
		return err
	}
	if tok != json.Delim('[') {
		return d.errorf("%s must be an array, not %s", what, describe(tok))
	}
	for i := 0; d.dec.More(); i++ {
		if err := elem(i); err != nil {
			return err
		}
	}
	_, err = d.token() // ']'
	return err
}

// string reads one JSON string.
func (d *strictDecoder) string(what string) (string, error) {
	tok, err := d.token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", d.errorf("%s must be a string, not %s", what, describe(tok))
	}
	return s, nil
}

// int64 reads one JSON number that is an integer in int64 range.
func (d *strictDecoder) int64(what string) (int64, error) {
	tok, err := d.token()
	if err != nil {
		return 0, err
	}
	n, ok := tok.(json.Number)
	if !ok {
		return 0, d.errorf("%s must be an integer, not %s", what, describe(tok))
	}
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, d.errorf("%s must be an integer in int64 range, not %s", what, quote(string(n)))
	}
	return v, nil
}

// end checks that nothing but white space follows the document.
func (d *strictDecoder) end() error {
	if _, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		return d.errorf("data after the JSON document")
	}
	return nil
}

// marshalPretty encodes v the way serde_json's pretty printer does: two-space
// indent, `"key": value`, `{}` and `[]` for empty containers, no HTML
// escaping, and a trailing newline.
func marshalPretty(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
