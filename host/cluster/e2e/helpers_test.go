package e2e_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/internal/clusterproc"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// publisherKey signs every test artifact (publishers "test" and "palyra").
var publisherKey = testskill.Key(20)

// startCluster starts the nodes named as real processes (nodeArgs: extra
// serve arguments by node) and stops them
// when the test ends, failing it on anything left behind: a process, a
// socket or file in a node's TMPDIR, a daemon.json.
func startCluster(t *testing.T, nodeArgs map[string][]string, names ...string) *clusterproc.Cluster {
	t.Helper()
	ctx := context.Background()
	// Short socket paths: the sidecars' sockets live under each node's
	// TMPDIR, and a Unix socket path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "pc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c, err := clusterproc.Start(ctx, clusterproc.Options{Bin: bin, Dir: dir, Logf: t.Logf, NodeArgs: nodeArgs}, names...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range c.Nodes() {
				t.Logf("node %s output (successful API requests left out):\n%s", n.Name, tailOf(withoutOKRequests(n.Output()), 20000))
			}
		}
		if err := c.Close(ctx); err != nil {
			t.Errorf("closing the cluster: %v", err)
		}
	})
	return c
}

// withoutOKRequests drops the debug lines of API requests answered 2xx,
// which would push what explains a failure out of the tail.
func withoutOKRequests(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.Contains(line, "api request:") && strings.Contains(line, " status=2") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// installRequest installs data trusting the test key for "test" and
// "palyra".
func installRequest(data []byte) host.InstallRequest {
	pub := hex.EncodeToString(publisherKey.Public().(ed25519.PublicKey))
	return host.InstallRequest{Artifact: data, TrustedPublishers: []host.TrustedKey{
		{Publisher: "test", PublicKeyHex: pub}, {Publisher: "palyra", PublicKeyHex: pub},
	}}
}

// echoArtifact is a skill whose one tool test.echo returns its input
// document (the WAT module testdata/wasm/echo.wat): cheap to run, so the load measures
// the cluster, not the guest.
func echoArtifact(t testing.TB, id string) []byte {
	t.Helper()
	m := fmt.Sprintf(`manifest_version = 2
skill_id = %q
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
`, id)
	return testskill.Build(t, m, readFile(t, filepath.Join("..", "..", "..", "testdata", "wasm", "echo.wasm")), publisherKey)
}

// exampleArtifact is an example (sdk/examples/<name>) with its built module.
func exampleArtifact(t testing.TB, name, wasm string) []byte {
	t.Helper()
	return testskill.Build(t, string(readFile(t, filepath.Join(examplebuild.MustDir(t, name), "skill.toml"))), readFile(t, wasm), publisherKey)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// install installs data through n and wants it active.
func install(t testing.TB, n *clusterproc.Node, data []byte) *host.InstallResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := n.Client.Install(ctx, installRequest(data))
	if err != nil {
		t.Fatalf("install through %s: %v", n.Name, err)
	}
	if res.Status != "active" {
		t.Fatalf("install through %s: %s is %s %v", n.Name, res.SkillID, res.Status, res.Reasons)
	}
	return res
}

// echoCall calls skill id's test.echo through n with a small input and
// checks the output.
func echoCall(ctx context.Context, n *clusterproc.Node, id string) error {
	in := json.RawMessage(`{"text":"hello"}`)
	res, err := n.Client.Call(ctx, host.CallRequest{SkillID: id, ToolID: "test.echo", Input: in, Timeout: 5 * time.Second})
	if err != nil {
		return err
	}
	// echo.wat writes back the whole input document, the ABI's envelope
	// with the skill's id in it.
	if !strings.Contains(string(res.Output), fmt.Sprintf(`"skill_id":%q`, id)) || !strings.Contains(string(res.Output), string(in)) {
		return fmt.Errorf("%s through %s: output %s", id, n.Name, res.Output)
	}
	return nil
}

// eventually is clusterproc.Until with a 1-minute bound, failing t when it
// runs out; it returns the time to first success.
func eventually(t testing.TB, what string, try func(context.Context) error) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a failure bound on a loaded machine, not a measurement
	defer cancel()
	d, err := clusterproc.Until(ctx, 10*time.Millisecond, try)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return d
}
