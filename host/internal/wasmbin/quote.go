package wasmbin

import (
	"strconv"

	"github.com/palyra-go/palyra/internal/textutil"
)

// maxQuoted bounds how much of a module-supplied name an error message
// quotes.
const maxQuoted = 64

// quote returns name as a Go string literal, cut to maxQuoted bytes, for
// error messages: names come from untrusted input.
func quote(name string) string {
	if len(name) > maxQuoted {
		return strconv.Quote(textutil.Truncate(name, maxQuoted)) + "..."
	}
	return strconv.Quote(name)
}
