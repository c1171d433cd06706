// Package bootstrapdeps pins the project's dependencies in go.mod while the
// packages that use them are being written. It is removed once they exist.
package bootstrapdeps

import (
	_ "github.com/bytecodealliance/wasmtime-go/v25"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/goleak"
	_ "golang.org/x/sys/unix"
)
