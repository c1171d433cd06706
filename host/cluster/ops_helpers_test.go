package cluster

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/internal/testskill"
)

// member is one node of a test cluster: its link, its host on its own
// state dir, and the node over them.
type member struct {
	cfg   Config
	state string
	link  *Link
	host  *host.Host
	node  *Node
}

// testLogger writes to t's log.
func testLogger(t testing.TB, name string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: hclog.Info, Output: testWriter{t}})
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// openMember opens a host on m.state and makes it a node of m.link.
func openMember(t testing.TB, m *member) {
	t.Helper()
	ctx := context.Background()
	hlog := hclog.New(&hclog.LoggerOptions{Name: m.cfg.NodeName, Level: hclog.Warn, Output: testWriter{t}})
	h, err := host.Open(ctx, host.Config{StateDir: m.state, SidecarPath: filepath.Join(bin, "palyra-sidecar"), Logger: hlog})
	if err != nil {
		t.Fatal(err)
	}
	m.host = h
	if m.node, err = NewNode(ctx, m.link, h, NodeOptions{Version: "test", Logger: testLogger(t, m.cfg.NodeName)}); err != nil {
		h.Close(ctx)
		m.host = nil
		t.Fatal(err)
	}
}

// closeNode closes m's node and host (not its link); closing twice is a
// no-op.
func (m *member) closeNode(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	if m.node != nil {
		if err := m.node.Close(ctx); err != nil {
			t.Errorf("%s: node close: %v", m.cfg.NodeName, err)
		}
		m.node = nil
	}
	if m.host != nil {
		if err := m.host.Close(ctx); err != nil {
			t.Errorf("%s: host close: %v", m.cfg.NodeName, err)
		}
		m.host = nil
	}
}

// close closes m's node, host and link.
func (m *member) close(t testing.TB) {
	t.Helper()
	m.closeNode(t)
	if m.link != nil {
		m.link.Close()
		m.link = nil
	}
}

// startCluster starts an n-node embedded cluster on loopback, each node
// with its own host on a fresh state dir; everything is closed at cleanup.
func startCluster(t *testing.T, n int) []*member {
	t.Helper()
	ctx := context.Background()
	cfgs := embeddedConfigs(t, n)
	ms := make([]*member, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range cfgs {
		ms[i] = &member{cfg: cfgs[i], state: t.TempDir()}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms[i].link, errs[i] = Dial(ctx, cfgs[i])
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, m := range ms {
			m.close(t)
		}
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d links up in %s", n, time.Since(start).Round(time.Millisecond))
	for _, m := range ms {
		openMember(t, m)
	}
	return ms
}

// eventually polls cond until it holds, failing t after a generous bound
// (a liveness bound, not a timing assertion).
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not the case after 60s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testKey signs the test skills; testPublisher trusts it.
var testKey = testskill.Key(7)

func testPublisher() []host.TrustedKey {
	return []host.TrustedKey{{Publisher: "acme", PublicKeyHex: hex.EncodeToString(testKey.Public().(ed25519.PublicKey))}}
}

// skillArtifact builds a signed artifact of skill id at version whose one
// tool (id+".t") echoes its input (testdata/wasm/echo.wasm).
func skillArtifact(t testing.TB, id, version string) []byte {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := testskill.OneToolManifest(id, version, "")
	return testskill.Build(t, manifest, wasm, testKey)
}
