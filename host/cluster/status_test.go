package cluster

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/palyra-go/palyra/host"
)

// collect sends an empty request to subject from a plain NATS client and
// gathers the replies for d.
func collect(t *testing.T, url, subject string, d time.Duration) [][]byte {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ch := make(chan *nats.Msg, 16)
	inbox := nc.NewInbox()
	sub, err := nc.ChanSubscribe(inbox, ch)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(subject, inbox, nil); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	end := time.After(d)
	for {
		select {
		case m := <-ch:
			out = append(out, m.Data)
		case <-end:
			return out
		}
	}
}

func TestMicroServiceAnswersAndFollowsTheCatalog(t *testing.T) {
	ctx := context.Background()
	nodes := startRouteCluster(t, 2, serveNothing)
	waitServing(t, nodes, 1, "acme.echo")
	url := nodes[0].link.ClientURL()

	pings := collect(t, url, "$SRV.PING."+ServiceName, time.Second)
	if len(pings) != 2 {
		t.Fatalf("%d answers to $SRV.PING.%s, want 2 (one per node)", len(pings), ServiceName)
	}
	for _, p := range pings {
		var pong micro.Ping
		if err := json.Unmarshal(p, &pong); err != nil || pong.Name != ServiceName || pong.Version != "1.2.3" {
			t.Errorf("ping answer %s (%v)", p, err)
		}
	}
	// $SRV.INFO: node 1 lists an endpoint per skill; node 0 none but its
	// own.
	subjects := func() map[string][]string {
		out := map[string][]string{}
		for _, raw := range collect(t, url, "$SRV.INFO."+ServiceName, time.Second) {
			var info micro.Info
			if err := json.Unmarshal(raw, &info); err != nil {
				t.Fatal(err)
			}
			for _, e := range info.Endpoints {
				if e.QueueGroup == CallQueueGroup {
					out[info.Metadata["node"]] = append(out[info.Metadata["node"]], e.Subject)
				}
			}
		}
		return out
	}
	got := subjects()
	want := []string{CallSubjectPrefix + "acme.echo", CallSubjectPrefix + "acme.sleep", CallSubjectPrefix + "acme.toolerr"}
	slices.Sort(got["n1"])
	if !slices.Equal(got["n1"], want) || len(got["n0"]) != 0 {
		t.Fatalf("call endpoints %v, want n1: %v and none on n0", got, want)
	}
	// A request of another wire version, or for another skill than its
	// subject names, is refused without running anything.
	for _, bad := range []struct{ subject, body string }{
		{CallSubjectPrefix + "acme.echo", `{"v":99}`},
		{CallSubjectPrefix + "acme.echo", `{"v":1,"request":{"skill_id":"acme.sleep"}}`},
		{HeartbeatSubjectPrefix + "n1" + NodeCallInfix + "acme.echo", `{"v":1,"request":{"skill_id":"acme.sleep"}}`},
	} {
		nc := nodes[0].link.Conn()
		m, err := nc.Request(bad.subject, []byte(bad.body), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var rep callReply
		if err := json.Unmarshal(m.Data, &rep); err != nil || rep.Kind != replyResult || rep.Error == nil || rep.Error.Code != "bad_request" {
			t.Errorf("%s %s: answer %s", bad.subject, bad.body, m.Data)
		}
	}
	// A skill disabled on node 1 is no longer served there.
	if _, err := nodes[1].host.Disable(ctx, host.StatusRequest{SkillID: "acme.echo", Version: "1.0.0", Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "node 1 to stop serving acme.echo", func() bool { return !nodes[1].node.route.serves("acme.echo") })
	got = subjects()
	if slices.Contains(got["n1"], CallSubjectPrefix+"acme.echo") || len(got["n1"]) != 2 {
		t.Fatalf("after disable: call endpoints %v", got)
	}
}

func TestClusterStatusListsTheNodes(t *testing.T) {
	ctx := context.Background()
	nodes := startRouteCluster(t, 3, func(i int, c *Config) {
		if i == 2 {
			c.Skills = []string{"acme.echo"}
			c.Labels = map[string]string{"zone": "b"}
		}
	})
	for i := range nodes {
		waitServing(t, nodes, i, "acme.echo")
	}
	// A few calls on node 2, so it has a rate to report.
	for range 3 {
		if _, err := nodes[2].node.Call(ctx, host.CallRequest{SkillID: "acme.echo", ToolID: "acme.echo.t", Input: json.RawMessage(`{"text":"x"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	var st *host.ClusterStatus
	waitFor(t, 10*time.Second, "node 0 to see three live nodes and node 2's calls", func() bool {
		var err error
		if st, err = nodes[0].node.Cluster(ctx); err != nil {
			t.Fatal(err)
		}
		if len(st.Nodes) != 3 {
			return false
		}
		for _, n := range st.Nodes {
			if !n.Live {
				return false
			}
		}
		return st.Nodes[2].CallsPerSecond > 0
	})
	b, _ := json.MarshalIndent(st, "", "  ")
	t.Logf("%s", b)
	if !st.Clustered || st.Node != "n0" || st.Nodes[0].Name != "n0" || st.Cluster != DefaultClusterName {
		t.Fatalf("status %+v", st)
	}
	all := []string{"acme.echo", "acme.sleep", "acme.toolerr"}
	for i, n := range st.Nodes {
		want := all
		if i == 2 {
			want = []string{"acme.echo"}
		}
		if n.Name != nodes[i].node.Name() || !slices.Equal(n.Skills, want) || n.Version != "1.2.3" ||
			n.Applied != nodes[i].node.Applied() || n.StartedAt.IsZero() {
			t.Errorf("node %d: %+v", i, n)
		}
	}
	if st.Nodes[2].Labels["zone"] != "b" || st.Nodes[2].SidecarsAlive != 1 {
		t.Errorf("node 2: labels %v, sidecars alive %d", st.Nodes[2].Labels, st.Nodes[2].SidecarsAlive)
	}
	info, err := nodes[0].link.Ops().Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.StreamLast != info.State.LastSeq {
		t.Errorf("stream last %d, ops stream at %d", st.StreamLast, info.State.LastSeq)
	}
}

func TestNodeWithoutSemanticVersion(t *testing.T) {
	ctx := context.Background()
	l, err := Dial(ctx, Config{NodeName: "solo", Embedded: &EmbeddedConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	h, err := host.Open(ctx, host.Config{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	n, err := NewNode(ctx, l, h, NodeOptions{Version: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close(ctx)
	pings := collect(t, l.ClientURL(), "$SRV.PING."+ServiceName, 500*time.Millisecond)
	var pong micro.Ping
	if len(pings) != 1 || json.Unmarshal(pings[0], &pong) != nil || pong.Version != "0.0.0" {
		t.Fatalf("pings %q", pings)
	}
}
