package main

import (
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/manifest"
)

// TestClusterStatusDaemon asks a real daemon (not clustered) for its
// cluster with `palyra cluster status --url`: a cluster of one, its node
// at the daemon's version serving the skill whose sidecar ran; the text
// is the table.
func TestClusterStatusDaemon(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))
	url := startDaemon(t, state)
	remote := func(args ...string) result { return cli(t, state, "", append(args, "--url", url)...) }
	if r := remote("skills", "install", "--json", "--artifact", probeArtifact(t, dir, "test.hookprobe", "0.1.0"), "--allow-tofu"); r.code != 0 {
		t.Fatalf("install: %s %s", r.stdout, r.stderr)
	}
	if r := remote("skills", "run", "--json", "test.hookprobe", "test.probe", "--input", "{}"); r.code != 0 {
		t.Fatalf("run: %s %s", r.stdout, r.stderr)
	}

	var st host.ClusterStatus
	remote("cluster", "status", "--json").decode(t, &st)
	if st.Clustered || st.Node != host.LocalNodeName() || len(st.Nodes) != 1 {
		t.Fatalf("cluster: %+v", st)
	}
	if n := st.Nodes[0]; n.Name != st.Node || !n.Live || n.Version != manifest.RuntimeVersion || len(n.Skills) != 1 || n.Skills[0] != "test.hookprobe" || n.SidecarsAlive != 1 {
		t.Errorf("the node: %+v", n)
	}

	r := remote("cluster", "status")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "cluster of one") || strings.Join(strings.Fields(lines[1]), " ") != "NODE LIVE VERSION SKILLS SIDECARS CALLS/S APPLIED POLICY SEEN_AGO" {
		t.Fatalf("table:\n%s", r.stdout)
	}
	if f := strings.Fields(lines[2]); len(f) < 8 || f[0] != host.LocalNodeName() || f[1] != "true" || f[2] != manifest.RuntimeVersion || f[3] != "test.hookprobe" || f[4] != "1" || len(f[7]) != 12 {
		t.Errorf("row: %q", lines[2])
	}

	// A daemon that cannot be reached is daemon_unreachable.
	if code := cli(t, state, "", "cluster", "status", "--json", "--url", closedURL(t)).errorCode(t); code != "daemon_unreachable" {
		t.Errorf("unreachable daemon: %s", code)
	}
}

// TestClusterTable renders a clustered status: the cluster's line with the
// stream's last sequence, and a row per node with its applied sequence.
func TestClusterTable(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := &host.ClusterStatus{Clustered: true, Cluster: "prod", Node: "a", StreamLast: 42, Nodes: []host.NodeStatus{
		{Name: "a", Version: "0.1.0", Live: true, LastSeen: now.Add(-250 * time.Millisecond), Skills: []string{"acme.echo", "acme.fetch"}, SidecarsAlive: 2, CallsPerSecond: 12.34, Applied: 42, PolicySHA256: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		{Name: "b", Live: false, LastSeen: now.Add(-5 * time.Second), Skills: nil, Applied: 40},
	}}
	got := clusterTable(st, now, false)
	want := []string{
		"cluster prod, answered by a, ops stream at 42, 2 node(s)",
		"NODE LIVE VERSION SKILLS SIDECARS CALLS/S APPLIED POLICY SEEN_AGO",
		"a true 0.1.0 acme.echo,acme.fetch 2 12.3 42 0123456789ab 300ms",
		"b false - - 0 0.0 40 - 5s",
	}
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != len(want) {
		t.Fatalf("table:\n%s", got)
	}
	for i := range want {
		if g := strings.Join(strings.Fields(lines[i]), " "); g != want[i] {
			t.Errorf("line %d: %q, want %q", i, g, want[i])
		}
	}
	if w := clusterTable(st, now, true); !strings.Contains(w, "POLICY_SHA256") || !strings.Contains(w, st.Nodes[0].PolicySHA256) {
		t.Errorf("wide table lacks the full policy digest:\n%s", w)
	}
}
