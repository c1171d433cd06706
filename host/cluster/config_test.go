package cluster

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/internal/testskill"
)

// TestConfigReplicated: a config change made on one node applies on
// every node (its tool, testdata/wasm/config.wasm, returns the config
// document it reads): the plain values through the ops stream, the
// sensitive one through the vault's sealed replication, never in clear in
// the stream; an unfit value is refused before anything is appended; an
// unset on another node applies everywhere.
func TestConfigReplicated(t *testing.T) {
	ctx := context.Background()
	links := dialCluster(t, 2)
	nodes := make([]*Node, 2)
	for i, l := range links {
		h := openNodeHostAt(t, l, t.TempDir(), testVaultKey)
		n, err := NewNode(ctx, l, h, NodeOptions{Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close(context.Background()) })
		nodes[i] = n
	}
	const id, secret = "acme.cfg", "tok-cluster-secret"
	wasm, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wasm", "config.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := testskill.OneToolManifest(id, "1.0.0", "") + `
[config]
sensitive = ["api_token"]
schema = '''{"type": "object", "required": ["api_token", "endpoint"], "properties": {
  "api_token": {"type": "string", "minLength": 8}, "endpoint": {"type": "string", "pattern": "^https://"}}}'''
`
	if _, err := nodes[0].Install(ctx, host.InstallRequest{Artifact: testskill.Build(t, manifest, wasm, testKey), TrustedPublishers: testPublisher()}); err != nil {
		t.Fatal(err)
	}
	call := func(n *Node) (string, error) {
		res, err := n.Call(ctx, host.CallRequest{SkillID: id, ToolID: id + ".t", Input: json.RawMessage(`{}`)})
		if err != nil {
			return "", err
		}
		return string(res.Output), nil
	}
	eventually(t, "node 1 has the skill, missing its config", func() bool {
		_, err := call(nodes[1])
		return errcode.Of(err) == "config_missing"
	})
	before := streamLast(t, links[0])
	if _, err := nodes[0].SetSkillConfig(ctx, host.SetConfigRequest{SkillID: id, Values: map[string]json.RawMessage{
		"endpoint": json.RawMessage(`"http://plain"`), "api_token": json.RawMessage(`"` + secret + `"`)}}); errcode.Of(err) != "config_invalid" {
		t.Fatalf("unfit endpoint: %v", err)
	}
	if after := streamLast(t, links[0]); after != before {
		t.Fatalf("a refused change appended %d ops", after-before)
	}
	if _, err := nodes[0].SetSkillConfig(ctx, host.SetConfigRequest{SkillID: id, Values: map[string]json.RawMessage{
		"endpoint": json.RawMessage(`"https://e"`), "api_token": json.RawMessage(`"` + secret + `"`)}}); err != nil {
		t.Fatal(err)
	}
	want := `{"api_token":"` + secret + `","endpoint":"https://e"}`
	for i, n := range nodes {
		eventually(t, "the config on node "+string(rune('0'+i)), func() bool {
			out, err := call(n)
			return err == nil && out == want
		})
	}
	// No op in the stream holds the sensitive value.
	for seq := uint64(1); seq <= streamLast(t, links[0]); seq++ {
		msg, err := links[0].Ops().GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(msg.Data), secret) {
			t.Fatalf("op %d holds the secret: %s", seq, msg.Data)
		}
	}
	if _, err := nodes[1].UnsetSkillConfig(ctx, host.UnsetConfigRequest{SkillID: id, Keys: []string{"endpoint"}}); err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		eventually(t, "the unset on node "+string(rune('0'+i)), func() bool {
			_, err := call(n)
			return errcode.Of(err) == "config_missing"
		})
	}
}
