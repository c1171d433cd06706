package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/hooks"
)

// hooksCommand is `palyra hooks`: the hook bindings of the state directory
// (<state>/hooks/bindings.json, host/hooks), or of a daemon with --url.
func (a *app) hooksCommand() *cobra.Command {
	c := group("hooks", "Bind skill tools to host events and fire them",
		a.hooksListCommand(), a.hooksBindCommand(), a.hooksSetEnabledCommand(true), a.hooksSetEnabledCommand(false),
		a.hooksRemoveCommand(), a.hooksFireCommand())
	c.Long = "hooks edits the hook bindings: \"when event E happens, call tool T of skill S with the event\", as Palyra's hooks. " +
		"The daemon dispatches gateway:startup and the skill events (skill:installed, skill:quarantined, ...) as they happen; " +
		"the run phases (run:before_tool, ...) run when something fires them, such as `palyra hooks fire`. " +
		"A hook's tool answers with its exit code: 0 continue, 10 annotate, 20 request_approval, 30 block, 40 transform_preview, below 0 or from 50 up fail_run; " +
		"only some decisions are allowed for each event, and the highest-priority one wins.\n\n" +
		"Locally the verbs edit <state>/hooks/bindings.json under its lock, so they are safe while a daemon serves the same state directory (it re-reads the file for every event). " +
		"--principal is recorded as the binding's owner (bind) and as updated_by.\n\n" + daemonModeHelp
	a.registerDaemonFlags(c)
	return c
}

// hookList is the JSON of hooks list (the daemon's GET /v1/hooks shape).
type hookList struct {
	Bindings []hooks.Binding `json:"bindings"`
}

func (a *app) hooksListCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Example: "  palyra hooks list\n  palyra hooks list -o wide",
		Short:   "List the hook bindings",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sv, err := a.service(cmd, &stateFlags{readOnly: true})
			if err != nil {
				return err
			}
			defer sv.Close()
			var r hookList
			if r.Bindings, err = sv.Hooks(cmd.Context()); err != nil {
				return err
			}
			if r.Bindings == nil {
				r.Bindings = []hooks.Binding{}
			}
			return a.emit(r, hooksTable(r.Bindings, a.wide()))
		},
	}
}

// hooksTable is the text of hooks list: one aligned row per binding, "-"
// for the skill's default tool; -o wide adds the time limit and who owns
// and last changed the binding.
func hooksTable(bs []hooks.Binding, wide bool) string {
	t := output.NewTable(output.Column{Header: "hook_id"}, output.Column{Header: "event"}, output.Column{Header: "plugin_id"},
		output.Column{Header: "tool_id"}, output.Column{Header: "enabled"},
		output.Column{Header: "timeout_ms", Wide: true}, output.Column{Header: "on_failure", Wide: true}, output.Column{Header: "owner", Wide: true},
		output.Column{Header: "updated_by", Wide: true}, output.Column{Header: "display_name", Wide: true})
	for _, h := range bs {
		tool := h.ToolID
		if tool == "" {
			tool = "-"
		}
		timeout := "-"
		if h.TimeoutMs > 0 {
			timeout = strconv.FormatInt(h.TimeoutMs, 10)
		}
		onFailure := h.EffectiveOnFailure()
		if onFailure == "" {
			onFailure = "-"
		}
		t.Row(h.HookID, h.Event, h.PluginID, tool, h.Enabled, timeout, onFailure, h.Operator.OwnerPrincipal, h.Operator.UpdatedBy, h.Operator.DisplayName)
	}
	return t.String(wide)
}

// bindingText is the one-line text of a binding a verb returns.
func bindingText(verb string, b hooks.Binding) string {
	tool := b.ToolID
	if tool == "" {
		tool = "-"
	}
	onFailure := ""
	if of := b.EffectiveOnFailure(); of != "" {
		onFailure = " on_failure=" + of
	}
	return fmt.Sprintf("%s hook_id=%s event=%s plugin_id=%s tool_id=%s timeout_ms=%d%s enabled=%t owner_principal=%s updated_by=%s",
		verb, b.HookID, b.Event, b.PluginID, tool, b.TimeoutMs, onFailure, b.Enabled, b.Operator.OwnerPrincipal, b.Operator.UpdatedBy)
}

func (a *app) hooksBindCommand() *cobra.Command {
	var (
		event, skill, tool string
		displayName, notes string
		timeout            time.Duration
		disabled           bool
		onFailure          string
	)
	c := &cobra.Command{
		Use:     "bind HOOK_ID --event E --skill SKILL_ID [--tool T] [--timeout D] [--on-failure open|closed] [--disabled] [--display-name N] [--notes N]",
		Example: "  palyra hooks bind audit-installs --event skill:installed --skill acme.audit --tool on_event\n  palyra hooks bind pii-check --event run:before_tool --skill acme.dlp --tool check --timeout 2s --on-failure closed",
		Short:   "Bind a skill's tool to an event",
		Long: "bind creates the binding HOOK_ID: on EVENT, call --tool of --skill (without --tool, the tool the skill's manifest names in operator.plugin.default_tool_id) with {hook_id, event, payload}. " +
			"--timeout is the hook's own time limit (at most 60s; default the dispatcher's, 10s). The binding is enabled unless --disabled. " +
			"A run-phase hook (run:before_run, run:before_tool, run:after_tool, run:before_delivery, run:after_run) runs in every tool call and decides by its exit code (0 continue, 10 annotate, 20 request_approval, 30 block, 40 transform_preview, 50+ fail_run); " +
			"--on-failure says what the call does when the hook itself fails or times out: closed fails the call (run_hook_failed), open goes on and reports it as an annotation; the default is closed for run:before_* and open for run:after_*. " +
			"A hook id already bound is hook_exists; an event not among " + strings.Join(hooks.Events(), ", ") + " is unknown_hook_event.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout < 0 || timeout%time.Millisecond != 0 {
				return fmt.Errorf("%w: --timeout %s is not a whole, non-negative number of milliseconds", errUsage, timeout)
			}
			sv, err := a.service(cmd, &stateFlags{})
			if err != nil {
				return err
			}
			defer sv.Close()
			ev, err := hooks.NormalizeEvent(event)
			if err != nil {
				return err
			}
			b := hooks.Binding{
				HookID: args[0], Event: ev, PluginID: skill, ToolID: tool, TimeoutMs: timeout.Milliseconds(), OnFailure: onFailure, Enabled: !disabled,
				Operator: hooks.Operator{DisplayName: displayName, Notes: notes, OwnerPrincipal: a.daemon.principal, UpdatedBy: a.daemon.principal},
			}
			out, err := sv.BindHook(a.actor(cmd), b)
			if err != nil {
				return err
			}
			return a.emit(out, bindingText("hook.bound", *out))
		},
	}
	f := c.Flags()
	f.StringVar(&event, "event", "", "the event: "+strings.Join(hooks.Events(), ", "))
	f.StringVar(&skill, "skill", "", "the skill whose tool runs the hook (the binding's plugin_id)")
	f.StringVar(&tool, "tool", "", "the tool to call (default: the skill's operator.plugin.default_tool_id)")
	f.DurationVar(&timeout, "timeout", 0, "the hook's time limit (default: the dispatcher's; at most 60s)")
	f.StringVar(&onFailure, "on-failure", "", "run phases only: open (go on) or closed (fail the call) when the hook fails or times out (default: closed for run:before_*, open for run:after_*)")
	f.BoolVar(&disabled, "disabled", false, "create the binding disabled")
	f.StringVar(&displayName, "display-name", "", "a name for operators")
	f.StringVar(&notes, "notes", "", "notes for operators")
	requireFlags(c, "event", "skill")
	return c
}

func (a *app) hooksSetEnabledCommand(enabled bool) *cobra.Command {
	verb, short := "disable", "Stop a hook from running"
	if enabled {
		verb, short = "enable", "Let a hook run"
	}
	return &cobra.Command{
		Use:     verb + " HOOK_ID",
		Example: "  palyra hooks " + verb + " audit-installs",
		Short:   short,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &stateFlags{})
			if err != nil {
				return err
			}
			defer sv.Close()
			out, err := sv.SetHookEnabled(a.actor(cmd), args[0], enabled)
			if err != nil {
				return err
			}
			return a.emit(out, bindingText("hook."+verb+"d", *out))
		},
	}
}

// hookRemoved is the JSON of hooks remove (the daemon's answer's shape).
type hookRemoved struct {
	Removed string `json:"removed"`
}

func (a *app) hooksRemoveCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "remove HOOK_ID",
		Example: "  palyra hooks remove audit-installs",
		Short:   "Delete a hook binding",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &stateFlags{})
			if err != nil {
				return err
			}
			defer sv.Close()
			if err := sv.RemoveHook(a.actor(cmd), args[0]); err != nil {
				return err
			}
			id := strings.ToLower(strings.TrimSpace(args[0]))
			return a.emit(hookRemoved{Removed: id}, "hook.removed hook_id="+id)
		},
	}
}

func (a *app) hooksFireCommand() *cobra.Command {
	var (
		payload string
		sf      stateFlags
	)
	c := &cobra.Command{
		Use:     "fire EVENT [--payload JSON|@FILE]",
		Example: "  palyra hooks fire run:before_tool --payload '{\"tool\":\"echo\"}'",
		Short:   "Run the hooks bound to an event now and print their decisions",
		Long: "fire runs every enabled hook bound to EVENT at once, each with {hook_id, event, payload}, and prints each hook's outcome (exit code and decision, or the error code of a failed hook) and the resolution: " +
			"the winning decision, the hook that made it, the conflicts and the failed hooks, which do not vote. With --json it prints {event, outcomes, resolution}, as the daemon's POST /v1/hooks/fire. " +
			"The payload is --payload (a JSON document, @FILE, or @- for stdin; at most 256 KiB), else {\"principal\": --principal, \"source\": \"cli.fire\"}. " +
			"A failing hook is an outcome, not a failure of the command.\n\n" +
			"Locally the hooks' tools run in sidecars of this process (the binary is --sidecar, else $" + sidecarEnv + ", next to palyra, or in $PATH), passing the same gates as skills run; " +
			"with --url the daemon runs them.",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.refuseLocalOnly(cmd, append([]string{"sidecar"}, stateLocalFlags...)...); err != nil {
				return err
			}
			p, err := a.firePayload(payload)
			if err != nil {
				return err
			}
			// An unknown event is refused before any sidecar is looked for.
			if _, err := hooks.NormalizeEvent(args[0]); err != nil {
				return err
			}
			sv, err := a.service(cmd, &sf, append([]string{"sidecar"}, stateLocalFlags...)...)
			if err != nil {
				return err
			}
			defer sv.Close()
			out, err := sv.FireHooks(a.actor(cmd), host.FireRequest{Event: args[0], Payload: p})
			if err != nil {
				return err
			}
			if out.Outcomes == nil {
				out.Outcomes = []hooks.Outcome{}
			}
			return a.emit(out, fireText(out))
		},
	}
	c.Flags().StringVar(&payload, "payload", "", "the event payload: a JSON document, @FILE, or @- for stdin")
	sf.registerSidecar(c, "the palyra-sidecar binary (default $"+sidecarEnv+", next to palyra, or in $PATH; local only)")
	sf.register(c, true)
	return c
}

// firePayload is --payload, else the default payload naming the CLI.
func (a *app) firePayload(v string) (json.RawMessage, error) {
	if v == "" {
		return json.Marshal(map[string]string{"source": "cli.fire", "principal": a.daemon.principal})
	}
	data, err := a.readArg(v, hooks.MaxPayloadBytes)
	if err != nil {
		return nil, err
	}
	if !json.Valid(data) {
		return nil, fmt.Errorf("%w: --payload is not a JSON document", hooks.ErrInvalidPayload)
	}
	return json.RawMessage(data), nil
}

// fireText is the text of hooks fire: the resolution, then one line per
// hook.
func fireText(r *host.FireResult) string {
	res := r.Resolution
	lines := []string{"hooks.fire " + output.KV("event", r.Event, "hooks", len(r.Outcomes), "decision", res.Decision, "source", res.Source, "hook_id", res.HookID, "terminal", res.Terminal, "failed", len(res.Failed))}
	for _, o := range r.Outcomes {
		l := fmt.Sprintf("  hook_id=%s plugin_id=%s exit_code=%d", o.HookID, o.PluginID, o.ExitCode)
		if o.Decision != "" {
			l += " decision=" + string(o.Decision)
		}
		if o.Failed() {
			l += fmt.Sprintf(" code=%s error=%q", o.Code, o.Err)
		}
		lines = append(lines, l)
	}
	for _, v := range res.Conflicts {
		lines = append(lines, fmt.Sprintf("  conflict hook_id=%s plugin_id=%s decision=%s", v.HookID, v.PluginID, v.Decision))
	}
	return strings.Join(lines, "\n")
}
