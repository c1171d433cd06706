package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
