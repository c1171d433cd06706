//go:build !unix

package doctor

import "io/fs"

// ownerOf is unknown on this system.
func ownerOf(fs.FileInfo) (int, bool) { return 0, false }
