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
	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
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
	// format is -o (text, wide, json, yaml); jsonFlag is --json, the
	// alias of -o json kept for scripts. Read them with outputFormat.
	format   output.Format
	jsonFlag bool
	stateDir string
	// cmdPath is the command that failed, for the usage hint.
	cmdPath string
	// daemon holds the daemon-mode flags of the skills and hooks groups
	// (see daemonmode.go).
	daemon daemonFlags
	// palyra holds Palyra's hidden flags (palyracompat.go).
	palyra palyraFlags
}

// run executes the CLI with args and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, format: output.Text}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
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
	if cmd != nil {
		a.cmdPath = cmd.CommandPath()
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
			"Every command accepts -o json|yaml (--json is -o json); list commands print aligned tables, and -o wide adds their wider columns. On failure the exit code is non-zero and, with -o json or yaml, stdout carries {\"error\":{\"code\":\"...\",\"message\":\"...\"}}; `palyra error-codes` lists every code.",
		Example:       "  # what is installed, as a table\n  palyra skills list\n\n  # the tools of a skill, to pick one to run\n  palyra skills info acme.echo\n\n  # the same as YAML, for a script\n  palyra skills list -o yaml",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          noArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.PersistentFlags().VarP(formatFlag{&a.format}, "output", "o", "output format: "+strings.Join(output.Formats(), ", ")+" (not on the commands whose --output names a file)")
	root.PersistentFlags().BoolVar(&a.jsonFlag, "json", false, "print machine-readable JSON on stdout (the same as -o json)")
	_ = root.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return output.Formats(), cobra.ShellCompDirectiveNoFileComp
	})
	root.PersistentFlags().StringVar(&a.stateDir, "state-dir", "", "state directory (default $PALYRA_STATE_DIR, else $XDG_STATE_HOME/palyra or ~/.local/state/palyra)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%w: %v", errUsage, err)
	})
	// A mistyped command gets "Did you mean this?" (cobra's suggestions,
	// on for every group through noArgs).
	root.SuggestionsMinimumDistance = 2
	root.AddCommand(a.keysCommand(), a.skillsCommand(), a.trustCommand(), a.feedCommand(), a.policyCommand(), a.errorCodesCommand(), a.secretsCommand(), a.hooksCommand(), a.clusterCommand(), a.applyCommand(), a.diffCommand(), a.devCommand())
	root.AddCommand(a.approvalsCommand())
	root.AddCommand(a.doctorCommand())
	versioncmd.Install(root, "palyra")
	a.installPalyraRootFlags(root)
	fillGroupExamples(root)
	a.wireCompletion(root)
	return root
}

// noArgs rejects positional arguments with a usage error, so that a mistyped
// subcommand is reported rather than silently showing help.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return fmt.Errorf("%w: %s", errUsage, msg)
	}
	return nil
}

// group returns a command that only holds subcommands.
func group(use, short string, children ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:                        use,
		Short:                      short,
		Args:                       noArgs,
		RunE:                       func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		SuggestionsMinimumDistance: 2,
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

// outputFormat is the format the command prints in: json with --json,
// else -o's (text by default).
func (a *app) outputFormat() output.Format {
	if a.jsonFlag {
		return output.JSON
	}
	return a.format
}

// structured reports whether the command prints its result value (-o
// json or yaml, --json) rather than text for people.
func (a *app) structured() bool { return a.outputFormat().Structured() }

// wide reports -o wide.
func (a *app) wide() bool { return a.outputFormat() == output.Wide }

// formatFlag is the -o flag: it accepts only the formats output knows, so
// a wrong one is a usage error naming them.
type formatFlag struct{ f *output.Format }

func (v formatFlag) String() string {
	if v.f == nil {
		return string(output.Text)
	}
	return string(*v.f)
}
func (v formatFlag) Set(s string) error {
	f, err := output.ParseFormat(s)
	if err != nil {
		return err
	}
	*v.f = f
	return nil
}
func (formatFlag) Type() string { return "format" }

// emit prints a command's result: v as JSON or YAML with -o json|yaml
// (or --json), else text.
func (a *app) emit(v any, text string) error {
	if f := a.outputFormat(); f.Structured() {
		return output.WriteValue(a.stdout, f, v)
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
	// Hint is what to do about it, naming the flag or setting (see
	// hintFor); empty when the message says it all.
	Hint string `json:"hint,omitempty"`
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

// reportError prints a failure: as {"error":{...}} on stdout with -o
// json|yaml, else as one line on stderr, "palyra: MESSAGE [CODE]" (the
// only place the prefix is added), then the hint naming the flag or
// setting that resolves it, when there is one.
func (a *app) reportError(err error) {
	code := errcode.Of(err)
	msg := strings.TrimPrefix(err.Error(), "palyra: ")
	hint := hintFor(code)
	if code == errUsage.Code() {
		path := a.cmdPath
		if path == "" {
			path = "palyra"
		}
		hint = "see " + path + " --help"
	}
	if f := a.outputFormat(); f.Structured() {
		body := errorBody{Code: code, Message: msg, Hint: hint}
		var d interface {
			error
			Details() any
		}
		if errors.As(err, &d) {
			body.Details = d.Details()
		}
		if f == output.JSON {
			// One line, as scripts read it.
			enc := json.NewEncoder(a.stdout)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(errorReport{Error: body})
			return
		}
		_ = output.WriteValue(a.stdout, f, errorReport{Error: body})
		return
	}
	text, problems := problemLines(err)
	fmt.Fprintf(a.stderr, "palyra: %s [%s]\n", strings.TrimPrefix(text, "palyra: "), code)
	for _, p := range problems {
		fmt.Fprintf(a.stderr, "  - %s\n", p)
	}
	if hint != "" {
		fmt.Fprintf(a.stderr, "  hint: %s\n", hint)
	}
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

// fillGroupExamples gives every group without an Example of its own the
// first example line of each subcommand (groupExample), depth first.
func fillGroupExamples(c *cobra.Command) {
	for _, sub := range c.Commands() {
		fillGroupExamples(sub)
	}
	if c.HasSubCommands() && c.Example == "" {
		c.Example = groupExample(c)
	}
}

// groupExample is the Example of a group: its subcommands' first example
// lines, so that `palyra GROUP --help` shows how each is called.
func groupExample(c *cobra.Command) string {
	var b strings.Builder
	for _, sub := range c.Commands() {
		for _, l := range strings.Split(sub.Example, "\n") {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString("  " + t)
				break
			}
		}
	}
	return b.String()
}
