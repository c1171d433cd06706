package a2ui

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
)

// object checks that v is an object whose keys are all among keys. The
// first unknown key, in sorted order, is the error.
func (c errs) object(path string, v any, keys ...string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, c.invalid(path, "want an object, got %s", kindOf(v))
	}
	if k, ok := unknownKey(m, keys); ok {
		return nil, c.invalid(ptr(path, k), "unknown key (want %s)", strings.Join(keys, ", "))
	}
	return m, nil
}

// unknownKey returns the first key of m, in sorted order, not among keys.
func unknownKey(m map[string]any, keys []string) (string, bool) {
	var unknown []string
	for k := range m {
		if !slices.Contains(keys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return "", false
	}
	sort.Strings(unknown)
	return unknown[0], true
}

// get returns m[key]; a missing required key is an error.
func (c errs) get(path string, m map[string]any, key string, required bool) (any, bool, error) {
	v, ok := m[key]
	if !ok && required {
		return nil, false, c.invalid(ptr(path, key), "required key is missing")
	}
	return v, ok, nil
}

// alias returns which of the keys a and b (an alias of a) m has, a when
// neither; both is an error.
func (c errs) alias(path string, m map[string]any, a, b string) (string, error) {
	_, hasA := m[a]
	_, hasB := m[b]
	switch {
	case hasA && hasB:
		return "", c.invalid(ptr(path, b), "both %q and its alias %q are given", a, b)
	case hasB:
		return b, nil
	}
	return a, nil
}

// str returns m[key] as a string of at most max UTF-16 code units.
func (c errs) str(path string, m map[string]any, key string, required bool, max int) (string, bool, error) {
	v, ok, err := c.get(path, m, key, required)
	if err != nil || !ok {
		return "", ok, err
	}
	s, err := c.strValue(ptr(path, key), v, max)
	return s, true, err
}

// strValue checks that v is a string of at most max UTF-16 code units.
func (c errs) strValue(path string, v any, max int) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", c.invalid(path, "want a string, got %s", kindOf(v))
	}
	if n := jsLen(s); n > max {
		return "", c.limit(path, "length in UTF-16 code units", max, n)
	}
	return s, nil
}

// boolean returns m[key] as a bool.
func (c errs) boolean(path string, m map[string]any, key string) (bool, bool, error) {
	v, ok := m[key]
	if !ok {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, true, c.invalid(ptr(path, key), "want a boolean, got %s", kindOf(v))
	}
	return b, true, nil
}

// num returns m[key] as a number.
func (c errs) num(path string, m map[string]any, key string, required bool) (float64, bool, error) {
	v, ok, err := c.get(path, m, key, required)
	if err != nil || !ok {
		return 0, ok, err
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return 0, true, c.invalid(ptr(path, key), "want a number, got %s", kindOf(v))
	}
	return float(n), true, nil
}

// arr returns m[key] as an array of at most max elements; what names the
// count in a limit error ("item count").
func (c errs) arr(path string, m map[string]any, key string, required bool, max int, what string) ([]any, bool, error) {
	v, ok, err := c.get(path, m, key, required)
	if err != nil || !ok {
		return nil, ok, err
	}
	a, err := c.arrValue(ptr(path, key), v, max, what)
	return a, true, err
}

func (c errs) arrValue(path string, v any, max int, what string) ([]any, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, c.invalid(path, "want an array, got %s", kindOf(v))
	}
	if len(a) > max {
		return nil, c.limit(path, what, max, len(a))
	}
	return a, nil
}

// id checks an identifier: 1 to max UTF-16 code units of [A-Za-z0-9:_-].
func (c errs) id(path string, v any, max int) (string, error) {
	s, err := c.strValue(path, v, max)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", c.invalid(path, "empty (want 1 to %d characters of [A-Za-z0-9:_-])", max)
	}
	if r := badIDChar(s, false); r >= 0 {
		return "", c.invalid(path, "%s has the character %q (want [A-Za-z0-9:_-])", quote(s), r)
	}
	return s, nil
}

// oneOf checks that s is one of want.
func (c errs) oneOf(path, what, s string, want ...string) error {
	if slices.Contains(want, s) {
		return nil
	}
	return c.invalid(path, "unknown %s %s (want %s)", what, quote(s), strings.Join(want, ", "))
}

// free checks a free-form value (a list item or a table cell): a string of
// at most MaxString, or any other JSON value nested at most MaxValueDepth
// deep. It returns the value with numbers as float64. The path is built
// only for an error, since tables have thousands of cells.
func (c errs) free(path func() string, v any) (any, error) {
	if s, ok := v.(string); ok {
		if n := jsLen(s); n > MaxString {
			return nil, c.limit(path(), "length in UTF-16 code units", MaxString, n)
		}
		return s, nil
	}
	if d := valueDepth(v); d > MaxValueDepth {
		return nil, c.limit(path(), "nesting depth", MaxValueDepth, d)
	}
	return plain(v), nil
}
