package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
)

// loopTarget is one --call of skills loop.
type loopTarget struct {
	skill, tool string
	input       json.RawMessage
	pid         int // the last sidecar pid seen
}

// parseLoopCall parses SKILL:TOOL:INPUT_JSON (the input may hold colons).
func parseLoopCall(v string) (loopTarget, error) {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return loopTarget{}, fmt.Errorf("%w: --call %q is not SKILL:TOOL[:INPUT_JSON]", errUsage, v)
	}
	t := loopTarget{skill: parts[0], tool: parts[1], input: json.RawMessage("null")}
	if len(parts) == 3 && strings.TrimSpace(parts[2]) != "" {
		if !json.Valid([]byte(parts[2])) {
			return loopTarget{}, fmt.Errorf("%w: --call %q: the input is not a JSON document", errUsage, v)
		}
		t.input = json.RawMessage(parts[2])
	}
	return t, nil
}

func (a *app) loopCommand() *cobra.Command {
	var (
		s        stateFlags
		calls    []string
		count    int
		interval time.Duration
		timeout  time.Duration
	)
	c := &cobra.Command{
		Use: "loop --call SKILL:TOOL:INPUT_JSON... [--count N] [--interval D] [--sidecar PATH]",
		Example: "  palyra skills loop --call 'acme.echo:echo:{\"text\":\"hi\"}' --count 100 --interval 50ms\n" +
			"  palyra skills loop --call 'acme.echo:echo:{}' --count 10 -o json | jq -c 'select(.ok | not)'",
		Short: "Call tools round-robin in one host, printing one line per call",
		Long: "loop opens the host once and calls each --call target in turn, --count calls in all (0: until interrupted), waiting --interval between calls.\n\n" +
			"It prints one line per call:\n  call=N skill=S tool=T ok=true|false code=C sidecar_pid=P ms=D\n" +
			"and a line `sidecar skill=S pid=P` whenever a skill's sidecar is first seen or replaced. " +
			"With -o json (or --json) it prints one JSON object per call instead, one per line (JSON lines: call, skill, tool, ok, code, sidecar_pid, new_sidecar, ms, and error when the call failed); with -o yaml one YAML document per call. " +
			"It is the tool of the crash demo (scripts/crash-demo.sh): kill one skill's sidecar and watch only that skill's calls fail and recover. " +
			"It exits 0 when interrupted or done, whatever the calls' outcomes. It is local-only: it owns the sidecars it watches, so it refuses --url.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.refuseDaemonMode(cmd); err != nil {
				return err
			}
			if len(calls) == 0 {
				return fmt.Errorf("%w: give at least one --call", errUsage)
			}
			targets := make([]*loopTarget, 0, len(calls))
			for _, v := range calls {
				t, err := parseLoopCall(v)
				if err != nil {
					return err
				}
				targets = append(targets, &t)
			}
			ctx := cmd.Context()
			sv, err := a.service(cmd, &s)
			if err != nil {
				return err
			}
			defer sv.Close()
			for n := 1; count <= 0 || n <= count; n++ {
				if ctx.Err() != nil {
					return nil
				}
				t := targets[(n-1)%len(targets)]
				callCtx, cancel := context.WithTimeout(ctx, timeout)
				start := time.Now()
				res, err := sv.Call(callCtx, host.CallRequest{SkillID: t.skill, ToolID: t.tool, Input: t.input})
				ms := time.Since(start).Milliseconds()
				cancel()
				if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
					return nil // interrupted
				}
				if res == nil {
					res = host.CallResultOf(err)
				}
				pid := 0
				if res != nil && res.SidecarPID != 0 {
					pid = res.SidecarPID
				} else {
					pid = loopPID(ctx, sv, t.skill)
				}
				line := loopLine{Call: n, Skill: t.skill, Tool: t.tool, OK: err == nil, Code: "ok", MS: ms}
				if pid != 0 && pid != t.pid && err == nil {
					line.NewSidecar = true
					t.pid = pid
				}
				if pid == 0 {
					pid = t.pid
				}
				line.SidecarPID = pid
				if err != nil {
					line.Code, line.Error = errcode.Of(err), err.Error()
				}
				if err := a.loopPrint(line); err != nil {
					return err
				}
				if interval > 0 && (count <= 0 || n < count) {
					select {
					case <-ctx.Done():
						return nil
					case <-time.After(interval):
					}
				}
			}
			return nil
		},
	}
	s.register(c, true)
	s.registerSidecar(c, "the palyra-sidecar binary (default $"+sidecarEnv+", next to palyra, or in $PATH)")
	f := c.Flags()
	f.StringArrayVar(&calls, "call", nil, "a target SKILL:TOOL:INPUT_JSON (repeatable; called round-robin)")
	f.IntVar(&count, "count", 0, "calls in all (0: until interrupted)")
	f.DurationVar(&interval, "interval", 100*time.Millisecond, "the pause between two calls")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "each call's timeout")
	return c
}

// loopLine is what skills loop reports of one call: with -o json one
// compact JSON object per line (JSON lines), with -o yaml one YAML
// document per call, else the text lines its Long text describes.
type loopLine struct {
	Call  int    `json:"call"`
	Skill string `json:"skill"`
	Tool  string `json:"tool"`
	OK    bool   `json:"ok"`
	// Code is "ok" or the error code.
	Code       string `json:"code"`
	SidecarPID int    `json:"sidecar_pid"`
	// NewSidecar is true when this call saw the skill's sidecar for the
	// first time or a replacement of it (a new pid).
	NewSidecar bool  `json:"new_sidecar"`
	MS         int64 `json:"ms"`
	// Error is the error message of a failed call.
	Error string `json:"error,omitempty"`
}

// loopPrint prints one call's line in the output format.
func (a *app) loopPrint(l loopLine) error {
	switch f := a.outputFormat(); f {
	case output.JSON:
		enc := json.NewEncoder(a.stdout)
		enc.SetEscapeHTML(false)
		return enc.Encode(l)
	case output.YAML:
		if _, err := io.WriteString(a.stdout, "---\n"); err != nil {
			return err
		}
		return output.WriteValue(a.stdout, f, l)
	}
	if l.NewSidecar {
		fmt.Fprintf(a.stdout, "sidecar skill=%s pid=%d\n", l.Skill, l.SidecarPID)
	}
	_, err := fmt.Fprintf(a.stdout, "call=%d skill=%s tool=%s ok=%t code=%s sidecar_pid=%d ms=%d\n", l.Call, l.Skill, l.Tool, l.OK, l.Code, l.SidecarPID, l.MS)
	if l.Error != "" {
		fmt.Fprintf(a.stderr, "call=%d error: %s\n", l.Call, l.Error)
	}
	return err
}

// loopPID is the pid of a running sidecar of skill (any version), 0 if
// none (or if the service cannot tell).
func loopPID(ctx context.Context, sv host.Service, skill string) int {
	states, _ := sv.Sidecars(ctx)
	for _, st := range states {
		if st.SkillID == strings.ToLower(skill) && st.PID != 0 {
			return st.PID
		}
	}
	return 0
}
