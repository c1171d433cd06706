// Command palyra is the command-line tool for Palyra-Go skills: keys,
// packaging, verification, the trust store, the skills lifecycle (install,
// gate, run, remove) and hook bindings. The lifecycle and hooks verbs work
// on the state directory or, with --url, through a running palyra-host
// daemon (host/daemon/client), with the same output. Every command takes
// -o text|wide|json|yaml (--json is -o json; list commands print aligned
// tables), exits 0 only on success, and reports failures on one line with
// a stable error code (`palyra error-codes` lists them all) and a hint
// naming the flag that resolves it. Shell completion (`palyra completion`)
// offers the installed skill ids, versions and tool ids.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
