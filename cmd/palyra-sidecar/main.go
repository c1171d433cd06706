// Command palyra-sidecar is the per-skill sidecar process of Palyra-Go. The
// supervisor starts it through go-plugin and drives it over the
// palyra.sidecar.v1 contract; at install time it runs
// `palyra-sidecar precompile --wasm FILE --cache-dir DIR` to compile a module
// into the precompiled cache outside the supervisor. It is not meant to be run
// by hand. See package sidecar.
package main

import "github.com/palyra-go/palyra/sidecar"

func main() { sidecar.Main() }
