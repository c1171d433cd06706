package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/supervisor"
)

// sidecarEnv names the palyra-sidecar binary when --sidecar is not given.
const sidecarEnv = "PALYRA_SIDECAR"

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
			"Failures carry stable codes: fuel_exhausted, timeout, memory_limit_exceeded, trap, tool_error, invalid_input, invalid_output, sidecar_crashed, skill_quarantined, skill_disabled, skill_not_found, capability_denied, overloaded, ...",
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := a.runInput(input)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			h, closeHost, err := a.openHost(ctx, &s, sidecar)
			if err != nil {
				return err
			}
			defer closeHost()
			callCtx := ctx
			if timeout > 0 {
				var cancel context.CancelFunc
				callCtx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			res, err := h.Call(callCtx, args[0], args[1], in)
			if err != nil && errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w: %v", supervisor.ErrTimeout, err)
			}
			rep := runReport{SkillID: args[0], ToolID: args[1]}
			if res != nil {
				rep.InvocationID, rep.Output, rep.Stats, rep.Logs, rep.ToolError = res.InvocationID, res.Output, res.Stats, res.Logs, res.ToolError
			}
			if err != nil {
				if res != nil {
					if !a.jsonOut && res.ToolError != nil {
						fmt.Fprintf(a.stderr, "tool error %s: %q\n", res.ToolError.Code, res.ToolError.Message)
					}
					return &detailedError{err: err, details: rep}
				}
				return err
			}
			if a.jsonOut {
				return a.emit(rep, "")
			}
			var buf bytes.Buffer
			if json.Compact(&buf, res.Output) != nil {
				buf.Reset()
				buf.Write(res.Output)
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

// runInput reads --input: JSON, @FILE or @- (stdin).
func (a *app) runInput(v string) (json.RawMessage, error) {
	var data []byte
	switch {
	case v == "":
		return json.RawMessage("null"), nil
	case v == "@-":
		b, err := readLimited(a.stdin, maxRunInputBytes, "stdin")
		if err != nil {
			return nil, err
		}
		data = b
	case strings.HasPrefix(v, "@"):
		b, err := readSmallFile(v[1:], maxRunInputBytes)
		if err != nil {
			return nil, err
		}
		data = b
	default:
		data = []byte(v)
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%w: --input is not a JSON document", host.ErrInvalidInput)
	}
	return json.RawMessage(data), nil
}

// openHost opens a Host on the state directory with the sidecar binary
// found from sidecarFlag (see findSidecar). The returned func closes it,
// giving the sidecars up to 5 s to stop even when ctx is already done.
func (a *app) openHost(ctx context.Context, s *stateFlags, sidecarFlag string) (*host.Host, func(), error) {
	bin, err := findSidecar(sidecarFlag)
	if err != nil {
		return nil, nil, err
	}
	state, err := statedir.Resolve(a.stateDir)
	if err != nil {
		return nil, nil, err
	}
	prof, _, err := resolveProfile(state, s.profile)
	if err != nil {
		return nil, nil, err
	}
	h, err := host.Open(ctx, host.Config{
		StateDir: state, TrustStore: s.trustStore, Policy: prof, SidecarPath: bin,
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

// findSidecar locates the palyra-sidecar binary.
func findSidecar(flag string) (string, error) {
	if flag != "" {
		return checkSidecar(flag, "--sidecar")
	}
	if env := os.Getenv(sidecarEnv); env != "" {
		return checkSidecar(env, "$"+sidecarEnv)
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "palyra-sidecar")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("palyra-sidecar"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%w: give --sidecar PATH or set $%s, or install palyra-sidecar next to palyra or in $PATH", supervisor.ErrSidecarNotFound, sidecarEnv)
}

func checkSidecar(p, from string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s %s is not an executable file", supervisor.ErrSidecarNotFound, from, p)
	}
	return p, nil
}
