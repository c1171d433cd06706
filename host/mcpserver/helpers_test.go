package mcpserver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/mcpserver"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/proctest"
	"github.com/palyra-go/palyra/internal/testskill"
)

// publisherKey signs every test artifact (publisher "test").
var publisherKey = testskill.Key(7)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "mcpprobe", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// probeArtifact is the mcpprobe skill under skill id id, its manifest text
// passed through edit (when not nil).
func probeArtifact(t testing.TB, id string, edit func(string) string) []byte {
	t.Helper()
	m := strings.Replace(string(readFixture(t, "skill.toml")), `skill_id = "test.mcpprobe"`, fmt.Sprintf("skill_id = %q", id), 1)
	if edit != nil {
		m = edit(m)
	}
	return testskill.Build(t, m, readFixture(t, "mcpprobe.wasm"), publisherKey)
}

// testHost is a host on a fresh state directory under the tests' profile,
// with a bus the server wakes on.
type testHost struct {
	*host.Host
	bus  *events.Bus
	logs *proctest.Buffer
}

func openHost(t testing.TB) *testHost {
	t.Helper()
	return openHostWith(t, supervisor.Config{})
}

// openHostWith is openHost with the supervisor tuned by sc.
func openHostWith(t testing.TB, sc supervisor.Config) *testHost {
	t.Helper()
	ctx := context.Background()
	prof, err := policy.Parse(readFixture(t, "policy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	sock, err := os.MkdirTemp("", "mcp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	sc.SocketDir = sock
	bus := &events.Bus{}
	// The host's log is shown when the test fails.
	logs := &proctest.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host log:\n%s", logs)
		}
	})
	h, err := host.Open(ctx, host.Config{
		StateDir: t.TempDir(), SidecarPath: filepath.Join(bin, "palyra-sidecar"), Policy: prof, Bus: bus,
		Logger:     hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Warn}),
		Supervisor: sc,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("host Close: %v", err)
		}
	})
	return &testHost{Host: h, bus: bus, logs: logs}
}

func (h *testHost) install(t testing.TB, art []byte) {
	t.Helper()
	res, err := h.Install(context.Background(), host.InstallRequest{Artifact: art, AllowTOFU: true})
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if res.Status != "active" {
		t.Fatalf("install: status %s: %+v", res.Status, res)
	}
}

// sidecar is the supervisor's view of skill id's sidecar (the zero state,
// status stopped, when it has none).
func (h *testHost) sidecar(t testing.TB, id string) host.SidecarState {
	t.Helper()
	sts, err := h.Sidecars(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sts {
		if st.SkillID == id {
			return st
		}
	}
	return host.SidecarState{SkillID: id, Status: supervisor.StatusStopped}
}

// newServer is a server on h that watches the host until the test ends.
func newServer(t testing.TB, h *testHost, fallback mcpserver.Fallback) *mcpserver.Server {
	t.Helper()
	s, err := mcpserver.New(mcpserver.Options{
		Service: h.Host, Wake: h.bus,
		ApprovalWithoutElicitation: fallback,
		Logger:                     hclog.New(&hclog.LoggerOptions{Output: h.logs, Level: hclog.Info}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sync(context.Background(), true); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Watch(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := s.Close(context.Background()); err != nil {
			t.Errorf("server Close: %v", err)
		}
	})
	return s
}

// connect is an MCP client session with the server over in-memory
// transports, closed when the test ends.
func connect(t testing.TB, s *mcpserver.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	if _, err := s.Connect(ctx, st); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, recordingTransport(t, ct), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// listTools returns the server's tools by name.
func listTools(t testing.TB, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}
