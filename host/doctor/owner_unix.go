//go:build unix

package doctor

import (
	"io/fs"
	"syscall"
)

// ownerOf is the uid owning fi's file.
func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
