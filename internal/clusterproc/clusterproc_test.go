package clusterproc_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/internal/clusterproc"
	"github.com/palyra-go/palyra/internal/proctest"
	"github.com/palyra-go/palyra/internal/testskill"
)

const echoManifest = `manifest_version = 2
skill_id = "test.echo"
name = "Echo"
version = "1.0.0"
publisher = "test"

[[entrypoints.tools]]
id = "test.echo"
name = "echo"
description = "Returns its input"
input_schema = { type = "object" }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`

// TestHarness runs the harness's whole life on real processes: three
// nodes start together (each waits for the others' JetStream quorum), a
// skill installed through a is called under load through a while c is
// killed with SIGKILL (c's process and its sidecars are gone, reaped),
// c restarts on its state directory, a fourth node d joins, and Close
// stops every node cleanly (exit status 0, nothing left in a TMPDIR, no
// daemon.json) with no process of the run left alive.
func TestHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of real processes")
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "pc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	c, err := clusterproc.Start(ctx, clusterproc.Options{Bin: bin, Dir: dir, Logf: t.Logf}, "a", "b", "c")
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			c.Close(ctx)
		}
	}()
	var pids []int
	seen := func() {
		for _, n := range c.Nodes() {
			if n.Running() {
				pids = append(pids, n.PID())
				pids = append(pids, proctest.Children(n.PID())...)
			}
		}
	}
	a := c.Node("a")
	key := testskill.Key(21)
	mod, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Client.Install(ctx, host.InstallRequest{Artifact: testskill.Build(t, echoManifest, mod, key),
		TrustedPublishers: []host.TrustedKey{{Publisher: "test", PublicKeyHex: hex.EncodeToString(key.Public().(ed25519.PublicKey))}}})
	if err != nil || res.Status != "active" {
		t.Fatalf("install through a: %+v, %v", res, err)
	}
	target := clusterproc.Target{Skill: "test.echo", Tool: "test.echo", Input: json.RawMessage(`{"n":1}`)}
	if err := clusterproc.Call(ctx, a, target, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	seen()

	victim := c.Node("c")
	oldPID := victim.PID()
	kids := proctest.Children(oldPID)
	r, err := clusterproc.KillUnderLoad(ctx, c, clusterproc.Load{Nodes: []*clusterproc.Node{a}, Targets: []clusterproc.Target{target}, Callers: 4}, "c", 500*time.Millisecond, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(r.Summary())
	if !r.Held() {
		for _, o := range r.Bad {
			t.Errorf("call %s", o.Describe(r.Killed))
		}
		t.Errorf("the kill did not hold: %s", r.Summary())
	}
	if victim.Running() || proctest.Alive(oldPID) {
		t.Errorf("c (pid %d) still runs after Kill", oldPID)
	}
	for _, k := range kids {
		if proctest.Alive(k) {
			t.Errorf("c's child %d outlived it", k)
		}
	}
	if err := c.Kill("c"); err == nil {
		t.Error("Kill of a dead node: no error")
	}
	if err := c.Restart(ctx, "a"); err == nil {
		t.Error("Restart of a running node: no error")
	}

	if err := c.Restart(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if victim.PID() == oldPID || !victim.Running() {
		t.Errorf("c after Restart: pid %d (was %d), running %v", victim.PID(), oldPID, victim.Running())
	}
	if _, err := victim.Client.List(ctx, host.ListRequest{}); err != nil {
		t.Errorf("c's API after the restart: %v", err)
	}
	d, err := c.Add(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Client.List(ctx, host.ListRequest{}); err != nil {
		t.Errorf("d's API: %v", err)
	}
	if _, err := c.Add(ctx, "d"); err == nil {
		t.Error("Add of an existing name: no error")
	}
	seen()

	closed = true
	if err := c.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	for _, pid := range pids {
		if proctest.Alive(pid) {
			t.Errorf("process %d outlived the cluster", pid)
		}
	}
}

// TestMedianAndCounts: the figures' helpers.
func TestMedianAndCounts(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	for _, tt := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{ms(7), 7 * time.Millisecond},
		{ms(9, 1, 5), 5 * time.Millisecond},
		{ms(4, 1, 3, 2), 3 * time.Millisecond},
	} {
		if got := clusterproc.Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	got := clusterproc.FormatCounts(clusterproc.Counts([]clusterproc.Outcome{{Code: "ok"}, {Code: "node_lost"}, {Code: "ok"}}))
	if got != "node_lost=1 ok=2" {
		t.Errorf("FormatCounts = %q", got)
	}
}
