package wasmbin

import "strconv"

// maxQuoted bounds how much of a module-supplied name an error message
// quotes.
const maxQuoted = 64

// quote returns name as a Go string literal, cut to maxQuoted bytes, for
// error messages: names come from untrusted input.
func quote(name string) string {
	if len(name) > maxQuoted {
		cut := maxQuoted
		for cut > 0 && !utf8RuneStart(name[cut]) {
			cut--
		}
		return strconv.Quote(name[:cut]) + "..."
	}
	return strconv.Quote(name)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
