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
}

func (a *app) runCommand() *cobra.Command {
	var (
		s       stateFlags
		input   string
		sidecar string
		timeout time.Duration
	)
	c := &cobra.Command{
		Use:   "run <skill_id> <tool_id> --input JSON|@FILE [--timeout D] [--sidecar PATH]",
		Short: "Call a tool of an installed skill in its sidecar",
		Long: "run calls one tool of the current version of an installed skill, in a palyra-sidecar process, and prints the tool's output (JSON); with --json it prints {output, stats}.\n\n" +
			"Before the call the skill's status, its publisher's trust, its grants (manifest ∩ profile) and the input's schema are checked again; after it, the output is checked against the tool's output_schema.\n" +
			"The sidecar binary is --sidecar, else $PALYRA_SIDECAR, else palyra-sidecar next to the palyra executable, else palyra-sidecar in $PATH (sidecar_not_found otherwise).\n" +
			"Failures carry stable codes: fuel_exhausted, timeout, memory_limit_exceeded, trap, tool_error, invalid_input, invalid_output, sidecar_crashed, skill_quarantined, skill_disabled, skill_not_found, capability_denied, overloaded, ...\n" +
			"With --url the daemon runs the tool in its own sidecar, with --timeout (at most 10m) as the call's timeout, and the output is the same; --sidecar is local-only.",
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := a.daemonClient(cmd, append([]string{"sidecar"}, stateLocalFlags...)...)
			if err != nil {
				return err
			}
			in, err := a.runInput(input)
			if err != nil {
				return err
			}
			var (
				rep = runReport{SkillID: args[0], ToolID: args[1]}
				ran bool // the sidecar reported: rep holds its result
			)
			if cl != nil {
				res, cerr := cl.Call(cmd.Context(), args[0], args[1], in, timeout)
				if res != nil {
					ran = true
					rep.InvocationID, rep.Output, rep.Stats, rep.Logs, rep.ToolError = res.InvocationID, res.Output, res.Stats, res.Logs, res.ToolError
				}
				err = cerr
			} else {
				ran, err = a.runLocal(cmd.Context(), &s, sidecar, timeout, in, &rep)
			}
			if err != nil {
				if ran {
					if !a.jsonOut && rep.ToolError != nil {
						fmt.Fprintf(a.stderr, "tool error %s: %q\n", rep.ToolError.Code, rep.ToolError.Message)
					}
					return &detailedError{err: err, details: rep}
				}
				return err
			}
			if a.jsonOut {
				return a.emit(rep, "")
			}
			var buf bytes.Buffer
			if json.Compact(&buf, rep.Output) != nil {
				buf.Reset()
				buf.Write(rep.Output)
			}
			return a.emit(nil, buf.String())
		},
	}
	s.register(c, true)
	f := c.Flags()
	f.StringVar(&input, "input", "", "the tool input: a JSON document, or @FILE to read it from a file (@- for stdin); default null")
	f.DurationVar(&timeout, "timeout", 0, "the call's timeout (the skill's and the profile's limits still apply)")
	f.StringVar(&sidecar, "sidecar", "", "the palyra-sidecar binary (default $"+sidecarEnv+", next to palyra, or in $PATH)")
	return c
}

// runLocal calls the tool in a host opened on the state directory and fills
// rep with what the sidecar reported; ran says whether it reported.
func (a *app) runLocal(ctx context.Context, s *stateFlags, sidecar string, timeout time.Duration, in json.RawMessage, rep *runReport) (ran bool, err error) {
	h, closeHost, err := a.openHost(ctx, s, sidecar)
	if err != nil {
		return false, err
	}
	defer closeHost()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := h.Call(ctx, rep.SkillID, rep.ToolID, in)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w: %v", supervisor.ErrTimeout, err)
	}
	if res == nil {
		return false, err
	}
	rep.InvocationID, rep.Output, rep.Stats, rep.Logs, rep.ToolError = res.InvocationID, res.Output, res.Stats, res.Logs, res.ToolError
	return true, err
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

// openHost opens a Host on the state directory with the sidecar binary
// found from sidecarFlag (see findSidecar). The returned func closes it,
// giving the sidecars up to 5 s to stop even when ctx is already done.
func (a *app) openHost(ctx context.Context, s *stateFlags, sidecarFlag string) (*host.Host, func(), error) {
	bin, err := findSidecar(sidecarFlag)
	if err != nil {
		return nil, nil, err
	}
	layout, trustStore, err := a.resolveState(s)
	if err != nil {
		return nil, nil, err
	}
	prof, _, err := resolveProfile(layout.Dir(), s.profile)
	if err != nil {
		return nil, nil, err
	}
	vaultKey, vaultKeyCommand := cliconfig.VaultKey()
	h, err := host.Open(ctx, host.Config{
		StateDir: layout.Dir(), TrustStore: trustStore, Policy: prof, SidecarPath: bin,
		VaultKey: vaultKey, VaultKeyCommand: vaultKeyCommand, VulnFeedHook: cliconfig.VulnFeedHook(),
		Supervisor: supervisor.Config{IdleTimeout: -1},
	})
	if err != nil {
		return nil, nil, err
	}
	return h, func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = h.Close(cctx)
	}, nil
}

// findSidecar locates the palyra-sidecar binary: --sidecar, $PALYRA_SIDECAR,
// next to palyra, $PATH (cliconfig.Sidecar).
func findSidecar(flag string) (string, error) { return cliconfig.Sidecar(flag) }
