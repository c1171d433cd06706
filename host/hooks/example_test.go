package hooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/palyra-go/palyra/host/hooks"
)

// A hook skill's tool answers with an exit code: here a guard that blocks
// every tool call the run is about to make, and an auditor that annotates.
func Example() {
	ctx := context.Background()
	state, err := os.MkdirTemp("", "palyra-state-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(state)

	store := hooks.OpenStore(state)
	for _, b := range []hooks.Binding{
		{HookID: "guard.tools", Event: "before_tool", PluginID: "acme.guard", ToolID: "acme.guard.check", Enabled: true},
		{HookID: "audit.tools", Event: "run:before_tool", PluginID: "acme.audit", Enabled: true},
	} {
		if _, err := store.Bind(ctx, b); err != nil {
			fmt.Println(err)
			return
		}
	}

	// The daemon's CallFunc runs the tool in the skill's sidecar; this one
	// answers from a table.
	call := func(_ context.Context, skillID, toolID string, input json.RawMessage) (int32, json.RawMessage, error) {
		var in hooks.HookInput
		if err := json.Unmarshal(input, &in); err != nil {
			return 0, nil, err
		}
		if in.HookID == "guard.tools" && toolID == "acme.guard.check" {
			return 30, json.RawMessage(`{"reason":"writes are frozen"}`), nil // block
		}
		return 10, nil, nil // annotate
	}
	d := hooks.NewDispatcher(hooks.DispatcherConfig{Store: store, Call: call, Workers: 1})
	defer d.Close(ctx)

	outcomes, res, err := d.Fire(ctx, hooks.EventRunBeforeTool, map[string]string{"tool": "fs.write"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range outcomes {
		fmt.Printf("%s (skill %s): exit %d, %s", o.HookID, o.PluginID, o.ExitCode, o.Decision)
		if o.Output != nil {
			fmt.Printf(" %s", o.Output)
		}
		fmt.Println()
	}
	fmt.Printf("resolution: %s by %s, terminal %v, %d conflict(s)\n", res.Decision, res.HookID, res.Terminal, len(res.Conflicts))
	// Output:
	// audit.tools (skill acme.audit): exit 10, annotate
	// guard.tools (skill acme.guard): exit 30, block {"reason":"writes are frozen"}
	// resolution: block by guard.tools, terminal true, 1 conflict(s)
}

// Store edits bindings.json safely from several processes; a legacy file is
// rewritten in the current form by the first change.
func ExampleStore() {
	ctx := context.Background()
	state, err := os.MkdirTemp("", "palyra-state-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(state)

	store := hooks.OpenStore(state)
	b, err := store.Bind(ctx, hooks.Binding{
		HookID:   "Audit.Quarantine",
		Event:    "skill.quarantined", // a legacy spelling
		PluginID: "acme.auditor",
		Enabled:  true,
		Operator: hooks.Operator{OwnerPrincipal: "admin:ops"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(b.HookID, b.Event, b.PluginID, b.Enabled)

	if _, err := store.SetEnabled(ctx, b.HookID, false, "cli:alice"); err != nil {
		fmt.Println(err)
		return
	}
	got, _ := store.Get("audit.quarantine")
	fmt.Println(got.Enabled, got.Operator.UpdatedBy)

	_, err = store.Bind(ctx, hooks.Binding{HookID: "audit.quarantine", Event: "skill:enabled", PluginID: "x"})
	fmt.Println(err)
	// Output:
	// audit.quarantine skill:quarantined acme.auditor true
	// false cli:alice
	// hook already exists: "audit.quarantine"
}
