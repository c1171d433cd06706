package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/cmd/internal/versioncmd"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/spf13/cobra"
)

// Exit codes. Anything but exitOK is a failure.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// errUsage marks a command line that cannot be run as given.
var errUsage = cliconfig.ErrUsage

// maxSmallFileBytes caps files the CLI reads whole that should be small:
// keys, rotation statements, SBOM and provenance documents.
const maxSmallFileBytes = 4 << 20

// app carries what every command needs: the standard streams and the global
// flags. One app serves one invocation of run.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	jsonOut        bool
	stateDir       string
	// daemon holds the daemon-mode flags of the skills and hooks groups
	// (see daemonmode.go).
	daemon daemonFlags
}

// run executes the CLI with args and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var status exitStatus
	if errors.As(err, &status) {
		return int(status)
	}
	if isCobraUsageError(err) {
		err = fmt.Errorf("%w: %v", errUsage, err)
	}
	a.reportError(err)
	if errors.Is(err, errUsage) {
		return exitUsage
	}
	return exitFailure
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "palyra",
		Short: "Package, sign, verify, install and run Palyra skills; bind hooks",
		Long: "palyra packages WebAssembly skills into signed .palyra-skill artifacts, verifies them against a trust store, manages signing keys, installs and runs skills, and binds hooks.\n\n" +
			"The skills lifecycle verbs and the hooks verbs work on the state directory, or, given --url (or $PALYRA_DAEMON_URL), through a running palyra-host daemon; see `palyra skills --help`.\n\n" +
			"Every command accepts --json. On failure the exit code is non-zero and, with --json, stdout carries {\"error\":{\"code\":\"...\",\"message\":\"...\"}}; `palyra error-codes` lists every code.",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          noArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.PersistentFlags().BoolVar(&a.jsonOut, "json", false, "print machine-readable JSON on stdout")
	root.PersistentFlags().StringVar(&a.stateDir, "state-dir", "", "state directory (default $PALYRA_STATE_DIR, else $XDG_STATE_HOME/palyra or ~/.local/state/palyra)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%w: %v", errUsage, err)
	})
	root.AddCommand(a.keysCommand(), a.skillsCommand(), a.trustCommand(), a.policyCommand(), a.errorCodesCommand(), a.secretsCommand(), a.hooksCommand(), a.clusterCommand(), a.applyCommand(), a.diffCommand())
	root.AddCommand(a.doctorCommand())
	versioncmd.Install(root, "palyra")
	return root
}

// noArgs rejects positional arguments with a usage error, so that a mistyped
// subcommand is reported rather than silently showing help.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%w: unknown command %q for %q", errUsage, args[0], cmd.CommandPath())
	}
	return nil
}

// group returns a command that only holds subcommands.
func group(use, short string, children ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(children...)
	return c
}

// requireFlags marks flags as required; cobra reports a missing one as a
// flag error, which becomes a usage error.
func requireFlags(c *cobra.Command, names ...string) {
	for _, n := range names {
		if err := c.MarkFlagRequired(n); err != nil {
			panic(err) // programming error: the flag does not exist
		}
	}
}

// emit prints a command's result: v as indented JSON with --json, else text.
func (a *app) emit(v any, text string) error {
	if a.jsonOut {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err := io.WriteString(a.stdout, text)
	return err
}

// errorReport is the JSON shape of a failure.
type errorReport struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Details is the command's result when a failure has one (a skill
	// installed as quarantined, a refused capability escalation).
	Details any `json:"details,omitempty"`
}

// isCobraUsageError recognises the command-line errors cobra reports as
// plain strings (it has no typed errors for them).
func isCobraUsageError(err error) bool {
	if errcode.Of(err) != errcode.Internal {
		return false
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "required flag") || strings.HasPrefix(msg, "unknown command") ||
		strings.HasPrefix(msg, "if any flags in the group")
}

func (a *app) reportError(err error) {
	code := errcode.Of(err)
	if a.jsonOut {
		enc := json.NewEncoder(a.stdout)
		enc.SetEscapeHTML(false)
		body := errorBody{Code: code, Message: err.Error()}
		var d interface {
			error
			Details() any
		}
		if errors.As(err, &d) {
			body.Details = d.Details()
		}
		_ = enc.Encode(errorReport{Error: body})
		return
	}
	fmt.Fprintf(a.stderr, "palyra: %s [%s]\n", err, code)
}

// readSmallFile reads a file that must not exceed limit bytes.
func readSmallFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errIO, err)
	}
	defer f.Close()
	return readLimited(f, limit, path)
}

// readLimited reads r whole, failing when it holds more than limit bytes;
// the error names the source, the limit and the size seen.
func readLimited(r io.Reader, limit int64, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", errIO, name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s is over the %d-byte limit (read %d bytes before stopping)", errTooLarge, name, limit, len(data))
	}
	return data, nil
}

// errIO reports a file the CLI could not read or write.
var errIO = errcode.New("io_error", "file error")

// errTooLarge reports an input file over its limit (the host's sentinel of
// input_too_large).
var errTooLarge = host.ErrInputTooLarge
