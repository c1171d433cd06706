package a2ui

import (
	"bytes"
	"encoding/json"
)

// IsDocument reports whether a tool output looks like an A2UI document: a
// JSON object with the top-level keys "v", "surface" and "components". The
// daemon uses it to decide whether to validate a tool result with Validate;
// true does not mean valid, nor within MaxDocumentBytes.
//
// It reads only the top-level keys: values are skipped without decoding,
// and it stops as soon as the three keys are seen. Malformed JSON that it
// does not need to read past can still give true; Validate refuses it.
func IsDocument(out []byte) bool {
	var seenV, seenSurface, seenComponents bool
	return scanTopKeys(out, func(key string) bool {
		switch key {
		case "v":
			seenV = true
		case "surface":
			seenSurface = true
		case "components":
			seenComponents = true
		}
		return seenV && seenSurface && seenComponents
	})
}

// IsUpdate reports whether a tool output looks like an A2UI update: a JSON
// object with the top-level key "a2ui_update". As with IsDocument, only the
// top-level keys are read and true does not mean valid: ParseUpdate checks.
func IsUpdate(out []byte) bool {
	return scanTopKeys(out, func(key string) bool { return key == UpdateKey })
}

// scanTopKeys calls done with each top-level key of the JSON object out, in
// order, until done returns true (then it returns true). It returns false
// when out is not an object or ends before done says so.
func scanTopKeys(out []byte, done func(key string) bool) bool {
	i := skipSpace(out, 0)
	if i >= len(out) || out[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(out, i)
		if i >= len(out) || out[i] != '"' {
			return false // '}' (the object ended) or not JSON
		}
		end, ok := skipString(out, i)
		if !ok {
			return false
		}
		if done(topKey(out[i:end])) {
			return true
		}
		i = skipSpace(out, end)
		if i >= len(out) || out[i] != ':' {
			return false
		}
		if i, ok = skipValue(out, skipSpace(out, i+1)); !ok {
			return false
		}
		i = skipSpace(out, i)
		if i >= len(out) || out[i] != ',' {
			return false
		}
		i++
	}
}

// topKey decodes a quoted key; only keys with escapes are decoded fully.
func topKey(quoted []byte) string {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1])
	}
	var s string
	if json.Unmarshal(quoted, &s) != nil {
		return ""
	}
	return s
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the index after the value starting at b[i], counting
// brackets without recursion. It does not check the value's grammar.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				end, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
		}
		return 0, false
	}
	start := i
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i, i > start
}
