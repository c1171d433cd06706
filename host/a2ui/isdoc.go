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
	i := skipSpace(out, 0)
	if i >= len(out) || out[i] != '{' {
		return false
	}
	i++
	var seenV, seenSurface, seenComponents bool
	for {
		i = skipSpace(out, i)
		if i >= len(out) || out[i] != '"' {
			return false // '}' (the object ended) or not JSON
		}
		end, ok := skipString(out, i)
		if !ok {
			return false
		}
		switch topKey(out[i:end]) {
		case "v":
			seenV = true
		case "surface":
			seenSurface = true
		case "components":
			seenComponents = true
		}
		if seenV && seenSurface && seenComponents {
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
