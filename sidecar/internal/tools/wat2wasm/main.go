// Command wat2wasm converts every .wat file of a directory into the .wasm
// beside it, with wasmtime's WAT parser (through sidecar/internal/wasmrt, the only
// package that links wasmtime). The committed fixtures in testdata/wasm are
// made with it, and a test in sidecar/internal/wasmrt checks they are up to date:
//
//	go run ./sidecar/internal/tools/wat2wasm testdata/wasm
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: wat2wasm <dir>")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "wat2wasm:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	wats, err := filepath.Glob(filepath.Join(dir, "*.wat"))
	if err != nil {
		return err
	}
	if len(wats) == 0 {
		return fmt.Errorf("no .wat files in %s", dir)
	}
	for _, wat := range wats {
		src, err := os.ReadFile(wat)
		if err != nil {
			return err
		}
		bin, err := wasmrt.Wat2Wasm(string(src))
		if err != nil {
			return fmt.Errorf("%s: %w", wat, err)
		}
		out := strings.TrimSuffix(wat, ".wat") + ".wasm"
		if old, err := os.ReadFile(out); err == nil && bytes.Equal(old, bin) {
			continue
		}
		if err := os.WriteFile(out, bin, 0o644); err != nil {
			return err
		}
		fmt.Println("wrote", out)
	}
	return nil
}
