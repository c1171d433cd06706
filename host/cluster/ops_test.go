package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/testskill"
)

// status is skill id's current version's status on m ("" when m does not
// list it).
func status(t testing.TB, m *member, id string) string {
	t.Helper()
	ls, err := m.node.List(context.Background(), host.ListRequest{SkillID: id, CurrentOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Entries) == 0 {
		return ""
	}
	return ls.Entries[0].Status
}

// versions are the versions of skill id m lists.
func versions(t testing.TB, m *member, id string) []string {
	t.Helper()
	ls, err := m.node.List(context.Background(), host.ListRequest{SkillID: id})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ls.Entries {
		out = append(out, e.Version)
	}
	slices.Sort(out)
	return out
}

func callEcho(ctx context.Context, m *member, id string) (*host.CallResult, error) {
	return m.host.Call(ctx, host.CallRequest{SkillID: id, ToolID: id + ".t", Input: json.RawMessage(`{"n":1}`)})
}

// streamLast is the ops stream's last sequence.
func streamLast(t testing.TB, l *Link) uint64 {
	t.Helper()
	info, err := l.Ops().Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

// TestReplicatedTruth runs the replicated truth through a 3-node embedded
// cluster, each node with its own host and state dir: an install on one
// node is installed (verified by each) on every node; a quarantine on
// another is seen everywhere and refuses calls; a node closed while ops
// are appended catches up when it reopens on its state dir; a fresh node
// builds the whole state from the stream alone; a tampered artifact is
// refused on every node with payload_hash_mismatch; with two of three
// nodes gone, writes fail with cluster_unavailable while the survivor
// still calls what it serves.
func TestReplicatedTruth(t *testing.T) {
	ctx := context.Background()
	ms := startCluster(t, 3)
	const echo, other = "acme.echo", "acme.other"

	t.Run("install on n0 is installed on every node", func(t *testing.T) {
		start := time.Now()
		res, err := ms[0].node.Install(ctx, host.InstallRequest{Artifact: skillArtifact(t, echo, "1.0.0"), TrustedPublishers: testPublisher()})
		if err != nil || !res.Installed || res.Version != "1.0.0" {
			t.Fatalf("install: %+v, %v", res, err)
		}
		t.Logf("install applied on n0 (the origin) in %s", time.Since(start).Round(time.Millisecond))
		for _, m := range ms[1:] {
			eventually(t, m.cfg.NodeName+" lists "+echo+" active", func() bool { return status(t, m, echo) == "active" })
			t.Logf("install applied on %s %s after the install began", m.cfg.NodeName, time.Since(start).Round(time.Millisecond))
		}
		for _, m := range ms {
			info, err := m.node.Info(ctx, host.SkillRef{SkillID: echo})
			if err != nil || info.Inventory.ArtifactSHA256 != res.ArtifactSHA256 {
				t.Fatalf("%s: info %+v, %v; want artifact %s", m.cfg.NodeName, info, err, res.ArtifactSHA256)
			}
			if out, err := callEcho(ctx, m, echo); err != nil || out.Version != "1.0.0" {
				t.Fatalf("%s: call: %+v, %v", m.cfg.NodeName, out, err)
			}
		}
		// A second install of the same version: the origin gets the local
		// host's answer for its op.
		if _, err := ms[1].node.Install(ctx, host.InstallRequest{Artifact: skillArtifact(t, echo, "1.0.0")}); errcode.Of(err) != "already_installed" {
			t.Fatalf("second install: %v, want already_installed", err)
		}
	})

	t.Run("hook bindings carry the origin's id", func(t *testing.T) {
		b, err := ms[0].node.BindHook(ctx, host.HookBinding{Event: "skill:quarantined", PluginID: echo, Enabled: true})
		if err != nil || b.HookID == "" {
			t.Fatalf("bind: %+v, %v", b, err)
		}
		for _, m := range ms {
			eventually(t, m.cfg.NodeName+" has hook "+b.HookID, func() bool {
				hs, err := m.node.Hooks(ctx)
				return err == nil && len(hs) == 1 && hs[0].HookID == b.HookID
			})
		}
		if _, err := ms[2].node.SetHookEnabled(ctx, b.HookID, false); err != nil {
			t.Fatal(err)
		}
		if err := ms[1].node.RemoveHook(ctx, b.HookID); err != nil {
			t.Fatal(err)
		}
		if err := ms[1].node.RemoveHook(ctx, b.HookID); errcode.Of(err) != "hook_not_found" {
			t.Fatalf("second remove: %v, want hook_not_found", err)
		}
		for _, m := range ms {
			eventually(t, m.cfg.NodeName+" has no hook", func() bool {
				hs, err := m.node.Hooks(ctx)
				return err == nil && len(hs) == 0
			})
		}
	})

	t.Run("a review approved on n1 is approved on every node", func(t *testing.T) {
		const gen = "acme.gen"
		wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "echo.wasm"))
		if err != nil {
			t.Fatal(err)
		}
		m := testskill.OneToolManifest(gen, "1.0.0", "") + `
[builder]
experimental = true
source_kind = "prompt"
source_ref = "cluster"
rollout_flag = "cluster_builder"
review_status = "pending"

[builder.checklist]
capability_declaration_path = "skill.toml"
provenance_path = "provenance.json"
test_harness_path = "tests/harness.json"
`
		if _, err := ms[0].node.Install(ctx, host.InstallRequest{Artifact: testskill.Build(t, m, wasm, testKey)}); errcode.Of(err) != "review_pending" {
			t.Fatalf("install of pending builder output: %v, want review_pending", err)
		}
		for _, m := range ms {
			eventually(t, m.cfg.NodeName+" has "+gen+" quarantined", func() bool { return status(t, m, gen) == "quarantined" })
		}
		if _, err := ms[2].node.Enable(ctx, host.EnableRequest{SkillID: gen, Reason: "try", Override: true}); errcode.Of(err) != "review_pending" {
			t.Fatalf("enable: %v, want review_pending", err)
		}
		if _, err := ms[1].node.ApproveReview(host.WithPrincipal(ctx, "bob"), host.ReviewRequest{SkillID: gen, Reason: "read it"}); err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			eventually(t, m.cfg.NodeName+" has "+gen+" active", func() bool { return status(t, m, gen) == "active" })
		}
		var by string
		if err := ms[0].host.Events(ctx, host.EventsRequest{After: 0}, func(ev host.Event) error {
			if ev.Kind == "skill:review_approved" && ev.SkillID == gen {
				by = ev.Principal + ": " + ev.Reason
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if by != "bob: read it" {
			t.Fatalf("n0 journaled the approval as %q, want bob: read it", by)
		}
		if _, err := ms[0].node.Remove(ctx, host.RemoveRequest{SkillID: gen}); err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			eventually(t, m.cfg.NodeName+" has no "+gen, func() bool { return status(t, m, gen) == "" })
		}
	})

	t.Run("quarantine on n1 refuses the skill on every node", func(t *testing.T) {
		start := time.Now()
		res, err := ms[1].node.Quarantine(host.WithPrincipal(ctx, "alice"), host.StatusRequest{SkillID: echo, Reason: "suspicious"})
		if err != nil || !res.Changed {
			t.Fatalf("quarantine: %+v, %v", res, err)
		}
		for _, m := range []*member{ms[0], ms[2]} {
			eventually(t, m.cfg.NodeName+" has "+echo+" quarantined", func() bool { return status(t, m, echo) == "quarantined" })
			t.Logf("quarantine applied on %s %s after it began", m.cfg.NodeName, time.Since(start).Round(time.Millisecond))
		}
		if _, err := callEcho(ctx, ms[0], echo); errcode.Of(err) != "skill_quarantined" {
			t.Fatalf("call on n0: %v, want skill_quarantined", err)
		}
		// Who acted travels with the op.
		var by string
		if err := ms[2].host.Events(ctx, host.EventsRequest{After: 0}, func(ev host.Event) error {
			if ev.Kind == "skill:quarantined" {
				by = ev.Principal
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if by != "alice" {
			t.Fatalf("n2 journaled the quarantine by %q, want alice", by)
		}
	})

	t.Run("a node closed meanwhile catches up when it reopens", func(t *testing.T) {
		m := ms[2]
		before := m.node.Applied()
		m.closeNode(t)
		if _, err := ms[0].node.Enable(ctx, host.EnableRequest{SkillID: echo, Reason: "cleared", Override: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := ms[1].node.Install(ctx, host.InstallRequest{Artifact: skillArtifact(t, other, "1.0.0")}); err != nil {
			t.Fatal(err)
		}
		last := streamLast(t, ms[0].link)
		openMember(t, m)
		if got := m.node.Applied(); got < last || got <= before {
			t.Fatalf("n2 applied %d after reopening (before closing %d), want the stream's last %d", got, before, last)
		}
		if status(t, m, echo) != "active" || status(t, m, other) != "active" {
			t.Fatalf("n2 after catching up: %s %q, %s %q", echo, status(t, m, echo), other, status(t, m, other))
		}
		if _, err := callEcho(ctx, m, other); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ops applied again after a crash are harmless", func(t *testing.T) {
		m := ms[2]
		last := m.node.Applied()
		if last < 3 {
			t.Fatalf("applied %d", last)
		}
		m.closeNode(t)
		// A crash between applying the last three ops (a quarantine, an
		// enable, an install) and recording them: the recorded position
		// is behind, and they are applied again, in order.
		if err := os.WriteFile(filepath.Join(m.state, filepath.FromSlash(AppliedFile)), []byte(strconv.FormatUint(last-3, 10)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		openMember(t, m)
		if got := m.node.Applied(); got != last {
			t.Fatalf("applied %d, want %d", got, last)
		}
		if status(t, m, echo) != "active" || status(t, m, other) != "active" || !slices.Equal(versions(t, m, other), []string{"1.0.0"}) {
			t.Fatalf("after re-applying: %s %q, %s %q %v", echo, status(t, m, echo), other, status(t, m, other), versions(t, m, other))
		}
		if _, n := m.node.Refused(); n != 0 {
			t.Fatalf("%d refusals", n)
		}
	})

	t.Run("a fresh node builds the whole state from the stream", func(t *testing.T) {
		cfg := Config{NodeName: "n3", URLs: []string{ms[0].link.ClientURL()}, Logger: testLogger(t, "n3")}
		l, err := Dial(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		fresh := &member{cfg: cfg, state: t.TempDir(), link: l}
		defer fresh.close(t)
		openMember(t, fresh)
		if got, want := fresh.node.Applied(), streamLast(t, ms[0].link); got < want {
			t.Fatalf("fresh node applied %d, want %d", got, want)
		}
		for _, id := range []string{echo, other} {
			if status(t, fresh, id) != "active" {
				t.Fatalf("fresh node: %s is %q", id, status(t, fresh, id))
			}
			if _, err := callEcho(ctx, fresh, id); err != nil {
				t.Fatalf("fresh node: call %s: %v", id, err)
			}
		}
		if hs, _ := fresh.node.Hooks(ctx); len(hs) != 0 {
			t.Fatalf("fresh node hooks: %+v", hs)
		}
	})

	t.Run("a tampered artifact is refused on every node", func(t *testing.T) {
		good := skillArtifact(t, echo, "2.0.0")
		sum := sha256.Sum256(good)
		name := hex.EncodeToString(sum[:])
		// A rogue writer: other bytes under the good artifact's name, and
		// an install op naming it.
		if _, err := ms[0].link.Artifacts().PutBytes(ctx, name, skillArtifact(t, echo, "2.0.1")); err != nil {
			t.Fatal(err)
		}
		op, _ := json.Marshal(Op{V: OpVersion, Kind: OpInstall, ID: newOpID(), Origin: "rogue", At: time.Now().UTC(),
			ArtifactSHA256: name, Install: &InstallOptions{TrustedPublishers: testPublisher()}})
		ack, err := ms[0].link.JetStream().Publish(ctx, OpsSubjectPrefix+OpInstall, op)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			eventually(t, m.cfg.NodeName+" applied the rogue op", func() bool { return m.node.Applied() >= ack.Sequence })
			rs, count := m.node.Refused()
			if count != 1 || len(rs) != 1 || rs[0].Seq != ack.Sequence || rs[0].Code != "payload_hash_mismatch" || rs[0].Origin != "rogue" {
				t.Fatalf("%s refused %d: %+v", m.cfg.NodeName, count, rs)
			}
			if vs := versions(t, m, echo); !slices.Equal(vs, []string{"1.0.0"}) {
				t.Fatalf("%s has versions %v of %s", m.cfg.NodeName, vs, echo)
			}
		}
		// The honest install of the same artifact replaces the rogue bytes.
		if _, err := ms[1].node.Install(ctx, host.InstallRequest{Artifact: good}); err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			eventually(t, m.cfg.NodeName+" has 2.0.0", func() bool { return status(t, m, echo) == "active" && len(versions(t, m, echo)) == 2 })
		}
		// The rogue way straight to the node's check: the node reads the
		// object itself and refuses.
		if _, err := ms[0].link.Artifacts().PutBytes(ctx, name, []byte("not the artifact")); err != nil {
			t.Fatal(err)
		}
		fctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if _, err := ms[2].node.fetchArtifact(fctx, name); !errors.Is(err, artifact.ErrPayloadHashMismatch) {
			t.Fatalf("getArtifact of tampered bytes: %v", err)
		}
		if _, err := ms[2].node.fetchArtifact(fctx, hex.EncodeToString(make([]byte, 32))); !errors.Is(err, ErrArtifactMissing) {
			t.Fatalf("getArtifact of a missing object: %v", err)
		}
	})

	t.Run("junk in the stream is refused and skipped", func(t *testing.T) {
		ack, err := ms[0].link.JetStream().Publish(ctx, OpsSubjectPrefix+"junk", []byte("{not json"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ms[0].node.Disable(ctx, host.StatusRequest{SkillID: other, Reason: "after junk"}); err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			eventually(t, m.cfg.NodeName+" disabled "+other, func() bool { return status(t, m, other) == "disabled" })
			rs, _ := m.node.Refused()
			if len(rs) == 0 || rs[len(rs)-1].Seq != ack.Sequence || rs[len(rs)-1].Code != "cluster_invalid_op" {
				t.Fatalf("%s refusals %+v", m.cfg.NodeName, rs)
			}
		}
	})

	t.Run("quarantine reaches every node (median)", func(t *testing.T) {
		// Measured, not asserted: from the quarantine's start on n1 to
		// n0 and n2 listing the skill quarantined (the issue asks for a
		// median under 1 s; the figure goes in the closing note).
		var took []time.Duration
		for i := range 10 {
			start := time.Now()
			if _, err := ms[1].node.Quarantine(ctx, host.StatusRequest{SkillID: echo, Reason: "cycle " + strconv.Itoa(i)}); err != nil {
				t.Fatal(err)
			}
			for _, m := range []*member{ms[0], ms[2]} {
				eventually(t, m.cfg.NodeName+" quarantined", func() bool { return status(t, m, echo) == "quarantined" })
				took = append(took, time.Since(start))
			}
			if _, err := ms[1].node.Enable(ctx, host.EnableRequest{SkillID: echo, Reason: "cleared", Override: true}); err != nil {
				t.Fatal(err)
			}
			for _, m := range []*member{ms[0], ms[2]} {
				eventually(t, m.cfg.NodeName+" active", func() bool { return status(t, m, echo) == "active" })
			}
		}
		slices.Sort(took)
		t.Logf("quarantine on n1 seen on n0 and n2: median %s, max %s over %d", took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), len(took))
	})

	t.Run("two of three nodes gone: writes fail, local calls work", func(t *testing.T) {
		// The survivor's sidecar of 2.0.0 starts while the cluster is
		// whole (a sidecar start has nothing to do with the cluster).
		var err error
		for range 3 {
			if _, err = callEcho(ctx, ms[0], echo); err == nil {
				break
			}
			t.Logf("warming the sidecar: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		ms[1].close(t)
		ms[2].close(t)
		_, err = ms[0].node.Quarantine(ctx, host.StatusRequest{SkillID: echo, Reason: "no quorum"})
		if !errors.Is(err, ErrClusterUnavailable) || errcode.Of(err) != "cluster_unavailable" {
			t.Fatalf("quarantine without quorum: %v, want cluster_unavailable", err)
		}
		if _, err := ms[0].node.Install(ctx, host.InstallRequest{Artifact: skillArtifact(t, echo, "3.0.0")}); !errors.Is(err, ErrClusterUnavailable) {
			t.Fatalf("install without quorum: %v, want cluster_unavailable", err)
		}
		if status(t, ms[0], echo) != "active" {
			t.Fatalf("n0: %s is %q after the refused quarantine", echo, status(t, ms[0], echo))
		}
		if out, err := callEcho(ctx, ms[0], echo); err != nil || out.Version != "2.0.0" {
			t.Fatalf("call on the survivor: %+v, %v", out, err)
		}
	})
}

// TestValidateBeforeAppend shows junk requests are refused before anything
// is appended to the stream.
func TestValidateBeforeAppend(t *testing.T) {
	ctx := context.Background()
	cfg := Config{NodeName: "solo", Embedded: &EmbeddedConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"}, Logger: testLogger(t, "solo")}
	l, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := &member{cfg: cfg, state: t.TempDir(), link: l}
	defer m.close(t)
	openMember(t, m)
	tests := []struct {
		name string
		call func() error
		code string
	}{
		{"install of nothing", func() error { _, err := m.node.Install(ctx, host.InstallRequest{}); return err }, "install_invalid_argument"},
		{"install of junk", func() error {
			_, err := m.node.Install(ctx, host.InstallRequest{Artifact: []byte("junk")})
			return err
		}, "invalid_zip"},
		{"enable of no skill", func() error { _, err := m.node.Enable(ctx, host.EnableRequest{}); return err }, "install_invalid_argument"},
		{"review approval of no skill", func() error { _, err := m.node.ApproveReview(ctx, host.ReviewRequest{Reason: "x"}); return err }, "install_invalid_argument"},
		{"quarantine of no skill", func() error { _, err := m.node.Quarantine(ctx, host.StatusRequest{SkillID: " "}); return err }, "install_invalid_argument"},
		{"remove of no skill", func() error { _, err := m.node.Remove(ctx, host.RemoveRequest{}); return err }, "install_invalid_argument"},
		{"hook without plugin", func() error { _, err := m.node.BindHook(ctx, host.HookBinding{Event: "skill:enabled"}); return err }, "invalid_hook_binding"},
		{"hook toggle without id", func() error { _, err := m.node.SetHookEnabled(ctx, "", true); return err }, "invalid_hook_binding"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.call(); errcode.Of(err) != tc.code {
				t.Fatalf("%v, want %s", err, tc.code)
			}
		})
	}
	if last := streamLast(t, l); last != 0 {
		t.Fatalf("the stream holds %d ops, want none", last)
	}
	// An op that was applied is recorded: a disable of a skill that is not
	// installed is appended, applied as a failure, and answered with the
	// local host's error.
	if _, err := m.node.Disable(ctx, host.StatusRequest{SkillID: "acme.none"}); errcode.Of(err) != "skill_not_found" {
		t.Fatalf("disable: %v, want skill_not_found", err)
	}
	if got, err := readApplied(m.node.appliedPath()); err != nil || got != 1 || m.node.Applied() != 1 {
		t.Fatalf("applied file %d (%v), Applied %d; want 1", got, err, m.node.Applied())
	}
}
