package cluster

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/vault"
)

// TestSecretsReplicated: a secret set in node 0's vault file by another
// process (what `palyra secrets set` does) reaches node 1, which shares
// node 0's key, as the same ciphertext; node 2, whose key differs, does
// not store it and reports it missing (install's missing_secrets, and
// secret_not_found from the vault), never a crypto error; a delete on
// node 0 removes it from node 1.
func TestSecretsReplicated(t *testing.T) {
	ctx := context.Background()
	links := dialCluster(t, 3)
	otherKey := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	keys := []string{testVaultKey, testVaultKey, otherKey}
	states := make([]string, 3)
	nodes := make([]*Node, 3)
	for i, l := range links {
		states[i] = t.TempDir()
		h := openNodeHostAt(t, l, states[i], keys[i])
		n, err := NewNode(ctx, l, h, NodeOptions{Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close(context.Background()) })
		nodes[i] = n
	}
	t0 := time.Now()
	cli, err := vault.Open(vault.Config{StateDir: states[0], EncodedKey: keys[0]})
	if err != nil {
		t.Fatal(err)
	}
	name := vault.MustParseName("skill:palyra.http_fetch/api_token")
	// A node-local entry (this node's own state, as its trust store's
	// "sealed once" marker) is set first and never leaves the node.
	local := vault.Name{Scope: "global", Key: vault.NodeLocalKeyPrefix + "test.marker"}
	if err := cli.Set(ctx, local, []byte("node 0's own")); err != nil {
		t.Fatal(err)
	}
	if err := cli.Set(ctx, name, []byte("tok-1")); err != nil {
		t.Fatal(err)
	}
	v1 := nodes[1].Host().Vault()
	eventually(t, "the secret on node 1", func() bool {
		got, err := v1.Get(ctx, name)
		return err == nil && string(got) == "tok-1"
	})

	t.Logf("secret set on node 0 readable on node 1 after %s", time.Since(t0))
	src, _ := cli.SealedEntries(ctx)
	got, _ := v1.SealedEntries(ctx)
	if !got[name].Same(src[name]) {
		t.Fatal("node 1 holds another ciphertext than node 0 sealed")
	}
	eventually(t, "node 2 refusing the secret", func() bool {
		_, ok := nodes[2].secrets.refusedSecrets()[name]
		return ok
	})
	v2 := nodes[2].Host().Vault()
	if has, err := v2.Has(ctx, name); err != nil || has {
		t.Fatalf("node 2 Has = %v %v, want false", has, err)
	}
	if _, err := v2.Get(ctx, name); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("node 2 Get: %v, want secret_not_found", err)
	}
	missing := func(h *host.Host) int {
		res := installExampleResult(t, h, "http-fetch")
		return len(res.MissingSecrets)
	}
	if n := missing(nodes[1].Host()); n != 0 {
		t.Errorf("node 1 reports %d missing secrets", n)
	}
	if n := missing(nodes[2].Host()); n != 1 {
		t.Errorf("node 2 reports %d missing secrets, want 1", n)
	}
	// A second value replaces the first; a delete removes it.
	if err := cli.Set(ctx, name, []byte("tok-2")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new value on node 1", func() bool {
		got, err := v1.Get(ctx, name)
		return err == nil && string(got) == "tok-2"
	})
	// Node 0 has published two changes since it held the node-local
	// entry: had it published that one, the bucket would hold it.
	if _, err := nodes[0].secrets.kv.Get(ctx, secretKey(local)); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("the bucket's entry for node 0's node-local entry: %v, want none", err)
	}
	if has, err := v1.Has(ctx, local); err != nil || has {
		t.Fatalf("node 1 Has(node-local entry of node 0) = %v %v, want false", has, err)
	}
	if _, err := cli.Delete(ctx, name); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the delete on node 1", func() bool {
		has, err := v1.Has(ctx, name)
		return err == nil && !has
	})
	if has, _ := cli.Has(ctx, name); has {
		t.Fatal("node 0 got its deleted secret back")
	}
}
