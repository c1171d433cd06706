package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"
)

// sidecarEnv names the palyra-sidecar binary when --sidecar is not given.
const sidecarEnv = cliconfig.EnvSidecar

// maxRunInputBytes caps --input (sdk/ABI.md: a 1 MiB input document).
const maxRunInputBytes = 1 << 20

// runReport is the --json result of skills run.
type runReport struct {
	SkillID      string                 `json:"skill_id"`
	ToolID       string                 `json:"tool_id"`
	InvocationID string                 `json:"invocation_id,omitempty"`
	Output       json.RawMessage        `json:"output"`
	Stats        supervisor.Stats       `json:"stats"`
	Logs         []supervisor.LogRecord `json:"logs,omitempty"`
	ToolError    *supervisor.ToolError  `json:"tool_error,omitempty"`
	// Annotations and Preview are what run-phase hooks said about the
	// call (host.CallResult's).
	Annotations []host.HookAnnotation `json:"annotations,omitempty"`
	Preview     *host.HookPreview     `json:"preview,omitempty"`
}

// callOutcome fills rep from a call's result and turns its error into the
// command's: a deadline becomes timeout, and a failure the sidecar
// reported (a result came with the error) prints its tool error in text
// mode and carries details (the command's report, holding rep) in the
// error report. It returns nil when the call succeeded.
func (a *app) callOutcome(res *host.CallResult, err error, rep *runReport, details any) error {
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w: %v", supervisor.ErrTimeout, err)
	}
	if res == nil {
		res = host.CallResultOf(err)
	}
	if res != nil { // the sidecar reported: rep holds its result
		rep.InvocationID, rep.Output, rep.Stats, rep.Logs, rep.ToolError = res.InvocationID, res.Output, res.Stats, res.Logs, res.ToolError
		rep.Annotations, rep.Preview = res.Annotations, res.Preview
		if !a.structured() {
			a.printHookNotes(rep)
		}
	}
	if err == nil {
		return nil
	}
	if res == nil {
		return err
	}
	if !a.structured() && rep.ToolError != nil {
		fmt.Fprintf(a.stderr, "tool error %s: %q\n", rep.ToolError.Code, rep.ToolError.Message)
	}
	return &detailedError{err: err, details: details}
}

// printHookNotes prints what run hooks said about a call, on stderr so
// that stdout stays the tool's output: one line per annotation, and the
// preview a run:before_delivery hook set.
func (a *app) printHookNotes(rep *runReport) {
	for _, n := range rep.Annotations {
		if n.Code != "" {
			fmt.Fprintf(a.stderr, "hook %s (%s) failed, call went on (fail-open): %s: %s\n", n.HookID, n.Event, n.Code, n.Error)
			continue
		}
		msg := n.Message
		if msg == "" {
			msg = string(n.Data)
		}
		fmt.Fprintf(a.stderr, "annotation from hook %s (%s): %s\n", n.HookID, n.Event, msg)
	}
	if rep.Preview != nil {
		fmt.Fprintf(a.stderr, "preview from hook %s: %s\n", rep.Preview.HookID, rep.Preview.Text)
	}
}

// emitRun prints a successful call: report (the command's report,
// holding rep) with -o json|yaml, else the tool's output as one line of
// compact JSON.
func (a *app) emitRun(rep *runReport, report any) error {
	if a.structured() {
		return a.emit(report, "")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, rep.Output) != nil {
		buf.Reset()
		buf.Write(rep.Output)
	}
	return a.emit(nil, buf.String())
}

func (a *app) runCommand() *cobra.Command {
	var (
		s          stateFlags
		input      string
		timeout    time.Duration
		approvalID string
		noWait     bool
		wait       time.Duration
	)
	c := &cobra.Command{
		Use:     "run <skill_id> <tool_id> --input JSON|@FILE [--timeout D] [--sidecar PATH]",
		Example: "  palyra skills run acme.echo echo --input '{\"text\":\"hello\"}'\n  palyra skills run acme.echo echo --input @input.json -o json",
		Short:   "Call a tool of an installed skill in its sidecar",
		Long: "run calls one tool of the current version of an installed skill, in a palyra-sidecar process, and prints the tool's output (JSON); with --json it prints {output, stats}.\n\n" +
			"Before the call the skill's status, its publisher's trust, its grants (manifest ∩ profile) and the input's schema are checked again; after it, the output is checked against the tool's output_schema.\n" +
			"The sidecar binary is --sidecar, else $PALYRA_SIDECAR, else palyra-sidecar next to the palyra executable, else palyra-sidecar in $PATH (sidecar_not_found otherwise).\n" +
			"Failures carry stable codes: fuel_exhausted, timeout, memory_limit_exceeded, trap, tool_error, invalid_input, invalid_output, sidecar_crashed, skill_quarantined, skill_disabled, skill_not_found, capability_denied, overloaded, ...\n" +
			"With --url the daemon runs the tool in its own sidecar, with --timeout (at most 10m) as the call's timeout, and the output is the same; --sidecar is local-only.\n\n" +
			"A tool that needs a human's approval (see palyra approvals) does not run at once: run prints \"waiting for approval <id>…\" on stderr and waits " +
			"(polling the approval; Ctrl-C, --wait or the approval's expiry end the wait) until it is decided, then runs the call with the approval: " +
			"approved, the tool runs once with exactly this input; denied, the command fails with approval_denied and the reason. " +
			"With --no-wait it prints the approval's id (and -o json the pending approval) and exits " + fmt.Sprint(exitPending) + " without running anything; " +
			"run it later with --approval ID and the same --input.",
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := a.runInput(input)
			if err != nil {
				return err
			}
			sv, err := a.service(cmd, &s, append([]string{"sidecar"}, stateLocalFlags...)...)
			if err != nil {
				return err
			}
			defer sv.Close()
			ctx := a.actor(cmd)
			req := host.CallRequest{SkillID: args[0], ToolID: args[1], Input: in, Timeout: timeout, ApprovalID: approvalID}
			res, err := sv.Call(ctx, req)
			if pa := host.PendingApprovalOf(err); pa != nil {
				if noWait {
					if err := a.emit(pendingReport{SkillID: args[0], ToolID: args[1], Pending: pa},
						fmt.Sprintf("%s\napproval %s pending (%s; expires %s)", pa.ID, pa.ID, host.ReasonsText(pa.Reasons), pa.ExpiresAt.UTC().Format(time.RFC3339))); err != nil {
						return err
					}
					return exitStatus(exitPending)
				}
				if err := a.awaitApproval(ctx, sv, pa, wait); err != nil {
					return err
				}
				req.ApprovalID = pa.ID
				res, err = sv.Call(ctx, req)
			}
			rep := runReport{SkillID: args[0], ToolID: args[1]}
			if err := a.callOutcome(res, err, &rep, &rep); err != nil {
				return err
			}
			return a.emitRun(&rep, rep)
		},
	}
	s.register(c, true)
	s.registerSidecar(c, "the palyra-sidecar binary (default $"+sidecarEnv+", next to palyra, or in $PATH)")
	f := c.Flags()
	f.StringVar(&input, "input", "", "the tool input: a JSON document, or @FILE to read it from a file (@- for stdin); default null")
	f.DurationVar(&timeout, "timeout", 0, "the call's timeout, at most 10m (the skill's and the profile's limits still apply)")
	f.StringVar(&approvalID, "approval", "", "run a call that needs approval with this approved approval (the id --no-wait printed); the input must be the one approved")
	f.BoolVar(&noWait, "no-wait", false, fmt.Sprintf("when the call needs approval, print the approval's id and exit %d instead of waiting", exitPending))
	f.DurationVar(&wait, "wait", 0, "how long to wait for an approval (default: until it expires)")
	return c
}

// runInput reads --input: JSON, @FILE or @- (stdin).
func (a *app) runInput(v string) (json.RawMessage, error) {
	if v == "" {
		return json.RawMessage("null"), nil
	}
	data, err := a.readArg(v, maxRunInputBytes)
	if err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%w: --input is not a JSON document", host.ErrInvalidInput)
	}
	return json.RawMessage(data), nil
}

// readArg reads a document given as a flag value: the value itself, @FILE
// for a file's content, or @- for stdin, at most limit bytes.
func (a *app) readArg(v string, limit int64) ([]byte, error) {
	switch {
	case v == "@-":
		return readLimited(a.stdin, limit, "stdin")
	case strings.HasPrefix(v, "@"):
		return readSmallFile(v[1:], limit)
	}
	if int64(len(v)) > limit {
		return nil, fmt.Errorf("%w: the argument is %d bytes, over the %d-byte limit", errTooLarge, len(v), limit)
	}
	return []byte(v), nil
}
