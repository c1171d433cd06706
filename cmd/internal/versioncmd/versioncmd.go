// Package versioncmd is the `version` command and the `--version` flag of
// palyra and palyra-host (palyra-sidecar has its own, in package sidecar,
// since it does not use cobra). Both print internal/buildinfo.Info.
package versioncmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/internal/buildinfo"
)

// Output formats of --output.
const (
	OutputText = "text"
	OutputJSON = "json"
)

// Install gives root a --version flag printing the one-line form of the
// program's build information, and adds the version command.
func Install(root *cobra.Command, program string) {
	root.Version = buildinfo.Get(program).String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(Command(program))
}

// Command is the version command: the full build information as text,
// or as JSON with --json or -o json.
func Command(program string) *cobra.Command {
	var jsonOut bool
	var output string
	c := &cobra.Command{
		Use:   "version [--json | -o json]",
		Short: "Print the version, commit, Go, wasmtime-go and skills ABI versions",
		Long: "version prints what this binary is: its version (set at link time with -ldflags -X " +
			"github.com/palyra-go/palyra/internal/buildinfo.version=..., else the module version of `go install`, else devel), " +
			"the commit it was built from (the build's vcs stamp, \"unknown\" without one), the Go toolchain, " +
			"the wasmtime-go version, the skills ABI and the sidecar protocol.",
		Example: "  " + program + " version\n  " + program + " version -o json\n  " + program + " --version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			asJSON, err := ParseOutput(jsonOut, output)
			if err != nil {
				return err
			}
			return Write(cmd.OutOrStdout(), buildinfo.Get(program), asJSON)
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "print JSON (the same as -o json)")
	c.Flags().StringVarP(&output, "output", "o", OutputText, "output format: text or json")
	return c
}

// ParseOutput resolves --json and --output into "print JSON or not"; an
// unknown format is cliconfig.ErrUsage.
func ParseOutput(jsonFlag bool, output string) (bool, error) {
	switch output {
	case "", OutputText:
		return jsonFlag, nil
	case OutputJSON:
		return true, nil
	}
	return false, fmt.Errorf("%w: --output %q: use text or json", cliconfig.ErrUsage, output)
}

// Write prints in as text or JSON.
func Write(w io.Writer, in buildinfo.Info, asJSON bool) error {
	if asJSON {
		return in.WriteJSON(w)
	}
	return in.WriteText(w)
}
