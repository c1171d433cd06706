package host

import (
	"github.com/palyra-go/palyra/host/statedir"
)

// defaultCacheDir is the precompiled-module cache of a state directory,
// <state>/cache/modules (statedir.Layout.ModuleCache).
func defaultCacheDir(stateDir string) string {
	return statedir.At(stateDir).ModuleCache()
}
