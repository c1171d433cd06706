package launch

import "strings"

// passed are the variables of the host's environment a child receives (see
// the package doc for why each one).
var passed = map[string]bool{
	"PATH":        true,
	"TZ":          true,
	"GOMAXPROCS":  true,
	"GOGC":        true,
	"GOMEMLIMIT":  true,
	"GODEBUG":     true,
	"GOTRACEBACK": true,
}

// passedPrefix marks the variables meant for the sidecar by name.
const passedPrefix = "PALYRA_SIDECAR_"

// Environ returns a child's environment: the allowlisted entries of host
// (the host's environment, as os.Environ gives it), then TMPDIR=tmpDir,
// then extra; a later entry replaces an earlier one with the same name, in
// place of the earlier one's position. Entries without '=' are dropped.
func Environ(host []string, tmpDir string, extra []string) []string {
	out := make([]string, 0, len(passed)+1+len(extra))
	at := map[string]int{}
	add := func(kv string) {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return
		}
		if i, dup := at[k]; dup {
			out[i] = kv
			return
		}
		at[k] = len(out)
		out = append(out, kv)
	}
	for _, kv := range host {
		if k, _, _ := strings.Cut(kv, "="); passed[k] || strings.HasPrefix(k, passedPrefix) {
			add(kv)
		}
	}
	add("TMPDIR=" + tmpDir)
	for _, kv := range extra {
		add(kv)
	}
	return out
}
