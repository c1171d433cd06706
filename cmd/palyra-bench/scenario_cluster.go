package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/report"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/clusterproc"
)

// clusterSkills are the trivial skills scenario H installs (four, like
// scenario D's load).
var clusterSkills = []string{"bench.trivial", "bench.trivial1", "bench.trivial2", "bench.trivial3"}

// scenarioH: a cluster of real palyra-host processes with embedded NATS on
// loopback. Three nodes a, b, c serve every skill; a fourth, r, serves
// none (--cluster-skills names a skill that does not exist), so each of
// its calls goes over NATS to a node that serves the skill. One call of
// the trivial tool through r's API (routed) against one through a's API
// (local) against host.Call on a host in this process; then the calls per
// second of 8 callers × 4 skills through the three nodes' APIs against
// the same load through a's alone.
func scenarioH(ctx context.Context, e *env) (_ []report.Row, err error) {
	bin := filepath.Dir(e.sidecar)
	if _, err := os.Stat(filepath.Join(bin, "palyra-host")); err != nil {
		if err := e.goBuild(ctx, "-o", filepath.Join(bin, "palyra-host"), "./cmd/palyra-host"); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "pc") // short: sidecar socket paths live under it
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	c, err := clusterproc.Start(ctx, clusterproc.Options{Bin: bin, Dir: dir,
		NodeArgs: map[string][]string{"r": {"--cluster-skills", "bench.routed-only"}}}, "a", "b", "c", "r")
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := c.Close(context.WithoutCancel(ctx)); cerr != nil {
			err = errors.Join(err, fmt.Errorf("the cluster did not stop cleanly: %w", cerr))
		}
	}()
	a, r := c.Node("a"), c.Node("r")
	for _, id := range clusterSkills {
		data, err := e.trivialArtifact(id[len("bench."):])
		if err != nil {
			return nil, err
		}
		res, err := a.Client.Install(ctx, e.installRequest(data))
		if err != nil {
			return nil, fmt.Errorf("install %s through a: %w", id, err)
		}
		if res.Status != "active" {
			return nil, fmt.Errorf("install %s through a: %s %v", id, res.Status, res.Reasons)
		}
	}
	call := func(n *clusterproc.Node, id string) func(context.Context) error {
		return func(ctx context.Context) error {
			res, err := n.Client.Call(ctx, host.CallRequest{SkillID: id, ToolID: "bench.trivial", Input: echoInput})
			if err != nil {
				return fmt.Errorf("%s through %s: %w", id, n.Name, err)
			}
			if string(res.Output) != trivialOutput {
				return fmt.Errorf("%s through %s: output %s", id, n.Name, res.Output)
			}
			return nil
		}
	}
	// Every node serves every skill before the timing starts (the install
	// reaches the others through the ops stream).
	for _, n := range c.Nodes() {
		for _, id := range clusterSkills {
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			_, err := clusterproc.Until(wctx, 20*time.Millisecond, call(n, id))
			cancel()
			if err != nil {
				return nil, fmt.Errorf("before the timing: %w", err)
			}
		}
	}

	h, _, closeHost, err := e.openHost(ctx, "h", true, supervisor.Config{IdleTimeout: -1})
	if err != nil {
		return nil, err
	}
	defer closeHost()
	trivial, err := e.trivialArtifact("trivial")
	if err != nil {
		return nil, err
	}
	if _, err := e.install(ctx, h, trivial); err != nil {
		return nil, err
	}

	routed := &contender{name: "through node r's API, routed over NATS", call: call(r, "bench.trivial")}
	local := &contender{name: "through node a's API, served locally", call: call(a, "bench.trivial")}
	lib := &contender{name: "host.Call in this process (library)", call: hostCall(h, "bench.trivial", "bench.trivial", echoInput, trivialOutput)}
	if err := interleave(ctx, e.opts.n(20, 200), e.opts.n(200, 2000), routed, local, lib); err != nil {
		return nil, err
	}

	// Honesty check: r must not have run the calls itself.
	routedNote := "both through the node's HTTP API; the routed call is one NATS request (micro endpoint, queue group) to a node that serves the skill"
	if sc, err := r.Client.Sidecars(ctx); err != nil {
		return nil, err
	} else {
		for _, s := range sc {
			if s.SkillID == "bench.trivial" {
				routedNote = "NOT ROUTED: node r ran bench.trivial in its own sidecar (this build does not route calls), so the row compares two local calls"
			}
		}
	}

	three := []*clusterproc.Node{c.Node("a"), c.Node("b"), c.Node("c")}
	through := func(nodes []*clusterproc.Node) func(ctx context.Context, caller, k int) error {
		return func(ctx context.Context, caller, k int) error {
			return call(nodes[caller%len(nodes)], clusterSkills[(caller+k)%len(clusterSkills)])(ctx)
		}
	}
	half := e.opts.d(2*time.Second, 8*time.Second) / 2
	var rate1, rate3 float64
	var n1, n3 int
	for range 2 {
		for _, side := range []struct {
			nodes []*clusterproc.Node
			rate  *float64
			n     *int
		}{{three[:1], &rate1, &n1}, {three, &rate3, &n3}} {
			rate, lat, err := load(ctx, half, throughputCallers, through(side.nodes))
			if err != nil {
				return nil, err
			}
			*side.rate += rate / 2
			*side.n += lat.Len()
		}
	}
	rate := func(name string, r float64, n int) report.Measurement {
		return report.Measurement{Name: name, Unit: "calls/s", Median: r, N: n}
	}
	l := local.timing(time.Microsecond)
	return []report.Row{
		compare("H", "cluster: trivial tool through a node that routes over NATS vs one that serves it", routed.timing(time.Microsecond), l, nil, routedNote),
		compare("H", "cluster: trivial tool through a node that serves it vs host.Call", l, lib.timing(time.Microsecond), nil,
			"the API's and the cluster node's overhead over the library"),
		compare("H", fmt.Sprintf("cluster: calls/s, %d callers × %d skills through 3 nodes' APIs vs 1", throughputCallers, len(clusterSkills)),
			rate("3 nodes", rate3, n3), rate("1 node", rate1, n1), nil,
			"every node on this machine: with its few cores, 3 nodes do not add capacity, they share it; the figure shows the cluster's overhead, not its scaling"),
	}, nil
}
