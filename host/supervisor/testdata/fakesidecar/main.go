// Command fakesidecar stands in for palyra-sidecar in the supervisor's
// tests of what the real one does not do on demand. TestMain builds it as
// palyra-sidecar-fake.
//
// Run with no arguments (as a serving sidecar), it fails at once without a
// go-plugin handshake: a start that fails, cheaply. Run as `precompile
// --wasm FILE ...`, it does what FILE says:
//
//	block    wait for SIGUSR1 (FILE.ready exists once it listens), then
//	         report success
//	fail     report a compile failure the way palyra-sidecar does
//	flood    write 1 MiB to stderr, then exit 3 without output
//	garbage  print a line that is not JSON and exit 0
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "precompile" {
		fmt.Fprintln(os.Stderr, "fakesidecar: no go-plugin here")
		os.Exit(1)
	}
	fs := flag.NewFlagSet("precompile", flag.ExitOnError)
	wasm := fs.String("wasm", "", "")
	fs.String("cache-dir", "", "")
	fs.String("sha256", "", "")
	fs.Bool("harden", true, "")
	fs.String("harden-private-dir", "", "")
	fs.Uint64("harden-nofile", 0, "")
	fs.Uint64("harden-nproc", 0, "")
	fs.Uint64("harden-data", 0, "")
	fs.Uint64("cpu-seconds", 0, "")
	fs.Uint64("memory-bytes", 0, "")
	_ = fs.Parse(os.Args[2:])
	mode, err := os.ReadFile(*wasm)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	switch strings.TrimSpace(string(mode)) {
	case "block":
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGUSR1)
		// Until now a SIGUSR1 would have been lost: say it is safe to send.
		if err := os.WriteFile(*wasm+".ready", nil, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		<-sig
		fmt.Println(`{"abi_version":"fake","cache_status":"miss"}`)
	case "fail":
		fmt.Println(`{"abi_version":"fake","error_code":"compile_failed","error":"boom"}`)
		os.Exit(1)
	case "flood":
		os.Stderr.Write(bytes.Repeat([]byte("x"), 1<<20))
		os.Exit(3)
	case "garbage":
		fmt.Println("not json")
	default:
		fmt.Fprintf(os.Stderr, "fakesidecar: unknown mode %q\n", mode)
		os.Exit(2)
	}
}
