package sidecar

import (
	"flag"
	"fmt"
	"io"

	"github.com/palyra-go/palyra/internal/buildinfo"
	"github.com/palyra-go/palyra/sidecar/internal/harden"
)

// VersionCommand is the sidecar's version mode: `palyra-sidecar version
// [--json]` (or `--version`) prints the binary's buildinfo.Info, with the
// kernel's support for the hardening (Info.Kernel), and exits. It reads
// no module and serves nothing, so it needs no hardening of its own (the
// executable's constructor has still dropped the capabilities and set
// no_new_privs); palyra doctor and palyra-host's hardened profile ask it.
const VersionCommand = "version"

// runVersion is the version mode.
func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonOut := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "palyra-sidecar version: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	info := buildinfo.Get("palyra-sidecar")
	k := harden.Probe()
	info.Kernel = &k
	write := info.WriteText
	if *jsonOut {
		write = info.WriteJSON
	}
	if err := write(stdout); err != nil {
		fmt.Fprintln(stderr, "palyra-sidecar version:", err)
		return 1
	}
	return 0
}
