package cluster

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/internal/testskill"
)

// testNode is one node of a test cluster: its link, host and node.
type testNode struct {
	link *Link
	host *host.Host
	node *Node
	once sync.Once
}

// close closes the node, its host and its link, in that order, once.
func (tn *testNode) close(t testing.TB) {
	tn.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if tn.node != nil {
			if err := tn.node.Close(ctx); err != nil {
				t.Logf("node close: %v", err)
			}
		}
		if tn.host != nil {
			if err := tn.host.Close(context.Background()); err != nil {
				t.Errorf("host close: %v", err)
			}
		}
		tn.link.Close()
	})
}

// testSkills are the skills every test node installs: id → module of
// testdata/wasm, input schema, wall clock limit (ms).
var testSkills = []struct{ id, module, input string }{
	{"acme.echo", "echo", `{ type = "object", required = ["text"], properties = { text = { type = "string" } } }`},
	{"acme.sleep", "sleep", `{ type = "object" }`},
	{"acme.toolerr", "tool_error", `{ type = "object" }`},
}

var skillKey = testskill.Key(7)

// install installs artifact on h, trusting its publisher.
func installSkill(t testing.TB, h *host.Host, artifact []byte) {
	t.Helper()
	pub := hex.EncodeToString(skillKey.Public().(ed25519.PublicKey))
	_, err := h.Install(context.Background(), host.InstallRequest{
		Artifact:          artifact,
		TrustedPublishers: []host.TrustedKey{{Publisher: "acme", PublicKeyHex: pub}},
	})
	if err != nil {
		t.Fatalf("install: %v", err)
	}
}

// skillArtifact builds skill id with one tool, "<id>.t", whose module is
// testdata/wasm/<module>.wasm; output is its output schema (default any
// object).
func routeArtifact(t testing.TB, id, module, input, output string) []byte {
	t.Helper()
	return routeArtifactWith(t, id, module, input, output, "")
}

// routeArtifactWith is routeArtifact with extra appended to the manifest.
func routeArtifactWith(t testing.TB, id, module, input, output, extra string) []byte {
	t.Helper()
	if output == "" {
		output = `{ type = "object" }`
	}
	m := fmt.Sprintf(`manifest_version = 2
skill_id = %q
name = "Cluster test"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "%s.t"
name = "t"
description = "test tool"
input_schema = %s
output_schema = %s

[capabilities.quotas]
wall_clock_timeout_ms = 20000
fuel_budget = 10000000

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`, id, id, input, output) + extra
	mod, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", module+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return testskill.Build(t, m, mod, skillKey)
}

// startCluster starts an n-node embedded cluster, each node's host with
// the test skills installed directly (until the ops stream replicates
// installs), edit tuning each node's config. Everything is closed at the
// test's end.
func startRouteCluster(t *testing.T, n int, edit func(i int, c *Config)) []*testNode {
	t.Helper()
	ctx := context.Background()
	cfgs := embeddedConfigs(t, n)
	nodes := make([]*testNode, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range cfgs {
		c := cfgs[i]
		c.HeartbeatInterval, c.LivenessWindow = 100*time.Millisecond, time.Second
		// embeddedConfigs lists every node's route, its own included, and
		// the default replica count counts one more server than that.
		c.Replicas = min(3, n)
		if n == 1 {
			c.Embedded.Routes = nil
		}
		if edit != nil {
			edit(i, &c)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := Dial(ctx, c)
			if err == nil {
				nodes[i] = &testNode{link: l}
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, tn := range nodes {
		if tn != nil {
			t.Cleanup(func() { tn.close(t) })
		}
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
	}
	for _, tn := range nodes {
		h, err := host.Open(ctx, host.Config{StateDir: t.TempDir(), SidecarPath: filepath.Join(bin, "palyra-sidecar")})
		if err != nil {
			t.Fatal(err)
		}
		tn.host = h
		for _, s := range testSkills {
			installSkill(t, h, routeArtifact(t, s.id, s.module, s.input, ""))
		}
		if tn.node, err = NewNode(ctx, tn.link, h, NodeOptions{Version: "1.2.3"}); err != nil {
			t.Fatal(err)
		}
	}
	return nodes
}

// waitFor polls cond every 20 ms until it holds, failing after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitServing waits until every node's peer table shows node i serving
// skill.
func waitServing(t *testing.T, nodes []*testNode, i int, skill string) {
	t.Helper()
	name := nodes[i].node.Name()
	waitFor(t, 10*time.Second, name+" serving "+skill, func() bool {
		for _, tn := range nodes {
			found := false
			for _, s := range tn.node.route.peers.serving(skill, time.Now()) {
				found = found || s == name
			}
			if !found {
				return false
			}
		}
		return true
	})
}
