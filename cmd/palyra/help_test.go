package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/palyra-go/palyra/host/errcode"
)

// walk calls fn on c and every command under it, depth first.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// TestEveryCommandHasAnExample walks the whole cobra tree (every command,
// whoever added it) and fails naming each command whose help has no
// Example: section, or whose example does not call palyra.
func TestEveryCommandHasAnExample(t *testing.T) {
	root := (&app{}).rootCommand()
	n := 0
	walk(root, func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" || strings.HasPrefix(c.CommandPath(), "palyra completion ") || strings.HasPrefix(c.Name(), "__") {
			return
		}
		n++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no Example:", c.CommandPath())
			return
		}
		if !strings.Contains(c.Example, "palyra ") {
			t.Errorf("%q: its Example does not run palyra:\n%s", c.CommandPath(), c.Example)
		}
	})
	if n < 40 {
		t.Fatalf("walked only %d commands: the walk misses the tree", n)
	}
}

// TestHintsNameRealCodesAndFlags: every hint is for a registered error
// code, and every --flag a hint names is a flag of some palyra command (a
// renamed flag fails here instead of leaving a hint nobody can follow).
func TestHintsNameRealCodesAndFlags(t *testing.T) {
	flags := map[string]bool{"--help": true}
	walk((&app{}).rootCommand(), func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) { flags["--"+f.Name] = true })
		}
	})
	// A flag stands alone: "-Wl,--gc-sections" in a build command is the
	// linker's.
	named := regexp.MustCompile(`(?:^|[\s(\[` + "`" + `])(--[a-z][a-z-]*)`)
	for code, hint := range cliHints {
		if errcode.Lookup(code) == nil {
			t.Errorf("hint for %q, which is no registered error code", code)
		}
		for _, m := range named.FindAllStringSubmatch(hint, -1) {
			if f := m[1]; !flags[f] {
				t.Errorf("hint for %s names %s, which no command has", code, f)
			}
		}
	}
	for _, code := range []string{"override_required", "already_installed", "capability_escalation", "untrusted_publisher", "state_dir_missing", "sidecar_not_found"} {
		if !strings.Contains(hintFor(code), "--") {
			t.Errorf("%s has no hint naming a flag", code)
		}
	}
}
