package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/cluster"
	"github.com/palyra-go/palyra/internal/clusterproc"
)

// demoTargets are the examples the cluster demo calls: one tool each, with
// an input its schema accepts. The demo's artifacts are these examples,
// packaged and signed by scripts/cluster-demo.sh.
var demoTargets = []clusterproc.Target{
	{Skill: "palyra.echo", Tool: "palyra.echo", Input: json.RawMessage(`{"text":"hello"}`)},
	{Skill: "palyra.report", Tool: "palyra.report", Input: json.RawMessage(`{"title":"demo","rows":[{"label":"a","value":1}]}`)},
	{Skill: "palyra.kv_counter", Tool: "palyra.get", Input: json.RawMessage(`{"name":"demo"}`)},
	{Skill: "palyra.event_log", Tool: "palyra.recent", Input: json.RawMessage(`{"limit":1}`)},
}

// clusterDemo is --cluster-demo: three palyra-host nodes (the binaries in
// o.clusterBin) with embedded NATS on loopback, a serving two of the four
// examples; the artifacts installed
// through node a (trust on first use); every example called through b and
// c; quarantine through b, refused on a and c (10 rounds); c killed with
// SIGKILL while 8 callers call the 4 examples through a and b; c restarted
// on its state directory to catch up. It prints the figures and returns an
// error when one is wrong: a call that failed with another code than
// node_lost (or node_lost for a call that was not in flight on c), a call
// that hung past its deadline, a refusal or catch-up that never came, a
// node that did not stop cleanly.
func clusterDemo(ctx context.Context, o options, stdout io.Writer, progress func(string, ...any)) (err error) {
	if o.clusterBin == "" || len(o.clusterArtifacts) == 0 {
		return errors.New("--cluster-demo needs --cluster-bin and --cluster-artifacts")
	}
	dir, err := os.MkdirTemp("", "pcd") // short: sidecar socket paths live under it
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	say := func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }

	progress("starting nodes a, b, c (embedded NATS, JetStream replicas 3)")
	// a serves two of the four examples: its calls to the other two go over
	// NATS to b or c, so some are in flight on c when it is killed.
	c, err := clusterproc.Start(ctx, clusterproc.Options{Bin: o.clusterBin, Dir: dir,
		NodeArgs: map[string][]string{"a": {"--cluster-skills", "palyra.echo,palyra.report"}}}, "a", "b", "c")
	if err != nil {
		return err
	}
	defer func() {
		progress("stopping the cluster")
		if cerr := c.Close(context.WithoutCancel(ctx)); cerr != nil {
			err = errors.Join(err, fmt.Errorf("the cluster did not stop cleanly: %w", cerr))
		}
	}()
	a, b, cn := c.Node("a"), c.Node("b"), c.Node("c")
	for _, n := range c.Nodes() {
		serves := "every skill"
		if n.Name == "a" {
			serves = "palyra.echo and palyra.report only (the others' calls are routed)"
		}
		say("node %s: pid %d, API %s, NATS route 127.0.0.1:%d, serves %s", n.Name, n.PID(), n.URL, n.RoutePort, serves)
	}
	// A failure shows the end of each node's log.
	defer func() {
		if err != nil {
			for _, n := range c.Nodes() {
				lines := strings.Split(strings.TrimSpace(n.Output()), "\n")
				progress("node %s, the last lines of its output:\n%s", n.Name, strings.Join(lines[max(0, len(lines)-40):], "\n"))
			}
		}
	}()

	progress("installing %d artifacts through node a", len(o.clusterArtifacts))
	for _, p := range o.clusterArtifacts {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		start := time.Now()
		res, err := a.Client.Install(ctx, host.InstallRequest{Artifact: data, AllowTOFU: true})
		if err != nil {
			return fmt.Errorf("install %s through a: %w", filepath.Base(p), err)
		}
		if res.Status != "active" {
			return fmt.Errorf("install %s through a: %s %v", res.SkillID, res.Status, res.Reasons)
		}
		say("installed %s %s through a (%v)", res.SkillID, res.Version, time.Since(start).Round(time.Millisecond))
	}

	progress("calling every example through b and c")
	var first []time.Duration
	for _, t := range demoTargets {
		for _, n := range []*clusterproc.Node{b, cn} {
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			d, err := clusterproc.Until(wctx, 10*time.Millisecond, func(ctx context.Context) error { return clusterproc.Call(ctx, n, t, 5*time.Second) })
			cancel()
			if err != nil {
				return fmt.Errorf("%s through %s: %w", t.Skill, n.Name, err)
			}
			first = append(first, d)
			say("%s.%s through %s: ok (first success after %v)", t.Skill, t.Tool, n.Name, d.Round(time.Millisecond))
		}
	}

	progress("quarantine through b, refused on a and c: 10 rounds")
	took, err := clusterproc.QuarantineRounds(ctx, b, []*clusterproc.Node{a, cn}, demoTargets[0], 10, time.Minute)
	if err != nil {
		return err
	}
	propagation := clusterproc.Median(took)

	callers, before, after := 8, 3*time.Second, 4*time.Second
	if o.quick {
		before, after = 1500*time.Millisecond, 3*time.Second
	}
	progress("kill -9 node c while %d callers call %d examples through a and b", callers, len(demoTargets))
	load := clusterproc.Load{Nodes: []*clusterproc.Node{a, b}, Targets: demoTargets, Callers: callers, Deadline: 5 * time.Second, Grace: 5 * time.Second}
	kr, err := clusterproc.KillUnderLoad(ctx, c, load, "c", before, after)
	if err != nil {
		return err
	}
	for i, bad := range kr.Bad {
		if i == 10 {
			say("... %d more", len(kr.Bad)-10)
			break
		}
		say("FAILED CALL: %s", bad.Describe(kr.Killed))
	}

	progress("while c is down: quarantine palyra.report through a; then restart c on its state directory")
	if _, err := a.Client.Quarantine(ctx, host.StatusRequest{SkillID: "palyra.report", Reason: "while c was down"}); err != nil {
		return fmt.Errorf("quarantine with c down: %w", err)
	}
	start := time.Now()
	if err := c.Restart(ctx, "c"); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	_, err = clusterproc.Until(wctx, 10*time.Millisecond, func(ctx context.Context) error {
		info, err := cn.Client.Info(ctx, host.SkillRef{SkillID: "palyra.report"})
		if err != nil {
			return err
		}
		if info.Inventory.Status != "quarantined" {
			return fmt.Errorf("palyra.report on c is %s", info.Inventory.Status)
		}
		return clusterproc.Call(ctx, cn, demoTargets[0], 5*time.Second)
	})
	cancel()
	if err != nil {
		return fmt.Errorf("c did not catch up: %w", err)
	}
	catchUp := time.Since(start)

	counts := clusterproc.Counts(kr.Outcomes)
	other := len(kr.Outcomes) - counts["ok"] - len(kr.NodeLost) - counts[clusterproc.CodeHung]
	say("")
	say("figures (issue 20, point 6):")
	say("  install through a, first success through b and c: median %v, max %v", clusterproc.Median(first).Round(time.Millisecond), maxDuration(first).Round(time.Millisecond))
	say("  quarantine through b, refused on a and c:          median %v, max %v over %d refusals (goal: within 1 s)", propagation.Round(time.Millisecond), maxDuration(took).Round(time.Millisecond), len(took))
	say("  kill -9 c under load (%d callers x %d examples through a and b):", callers, len(demoTargets))
	say("    calls ok %d, node_lost (in flight on c) %d, other errors %d, hung past the deadline %d, started after the kill %d",
		counts["ok"], len(kr.NodeLost), other, counts[clusterproc.CodeHung], kr.AfterKill)
	say("    routing window (kill to the end of the last failed call): %v", kr.Window.Round(time.Millisecond))
	lost := "n/a (no node listed c live before the kill)"
	if len(kr.Lost) > 0 {
		var parts []string
		for _, n := range []string{"a", "b"} {
			if d, ok := kr.Lost[n]; ok {
				parts = append(parts, fmt.Sprintf("%s %v", n, d.Round(time.Millisecond)))
			}
		}
		lost = strings.Join(parts, ", ")
	}
	say("    c seen lost by the survivors (GET /v1/cluster, NATS liveness window): %s", lost)
	say("  c restarted: caught up and serving %v after its start", catchUp.Round(time.Millisecond))
	say("  NATS: streams %s, %s; object store %s; KV %s, %s; subjects %s*, %s*, %s<skill>, %s<node>.heartbeat",
		cluster.OpsStream, cluster.EventsStream, cluster.ArtifactStore, cluster.StorageBucket, cluster.SecretsBucket,
		cluster.OpsSubjectPrefix, cluster.EventsSubjectPrefix, cluster.CallSubjectPrefix, cluster.HeartbeatSubjectPrefix)
	var wrong []string
	if len(kr.Bad) > 0 {
		wrong = append(wrong, fmt.Sprintf("%d calls failed otherwise than node_lost in flight on c, or hung", len(kr.Bad)))
	}
	if len(kr.NotLost) > 0 {
		wrong = append(wrong, fmt.Sprintf("%v never saw c lost", kr.NotLost))
	}
	if kr.AfterKill == 0 {
		wrong = append(wrong, "no call started after the kill")
	}
	if counts["ok"] == 0 {
		wrong = append(wrong, "no call succeeded")
	}
	if len(wrong) > 0 {
		return fmt.Errorf("cluster demo: %s", strings.Join(wrong, "; "))
	}
	if propagation > time.Second {
		say("  note: the quarantine median is over the 1 s goal on this machine now")
	}
	return nil
}

func maxDuration(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
