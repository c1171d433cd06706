package cluster

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// dialCluster joins an n-node embedded cluster on loopback (the nodes dial
// together: each waits for the others' servers), closed when the test
// ends.
func dialCluster(t *testing.T, n int) []*Link {
	t.Helper()
	cfgs := embeddedConfigs(t, n)
	links := make([]*Link, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := cfgs[i]
			c.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Name: c.NodeName})
			links[i], errs[i] = Dial(context.Background(), c)
		}()
	}
	wg.Wait()
	for i, l := range links {
		if l != nil {
			t.Cleanup(func() { l.Close() })
		}
		if errs[i] != nil {
			t.Fatalf("node %d: %v", i, errs[i])
		}
	}
	return links
}

var publisherKey = testskill.Key(7)

// testVaultKey is the vault key (base64 of 32 bytes) of the test hosts.
const testVaultKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// openNodeHost opens a host on a fresh state dir whose skill storage is
// link's, with the run's sidecar and testVaultKey.
func openNodeHost(t *testing.T, link *Link) *host.Host {
	t.Helper()
	return openNodeHostAt(t, link, t.TempDir(), testVaultKey)
}

// openNodeHostAt opens a host on state whose skill storage is link's, with
// the run's sidecar and vaultKey; closed when the test ends (before the
// link: cleanups run last-in first-out).
func openNodeHostAt(t *testing.T, link *Link, state, vaultKey string) *host.Host {
	t.Helper()
	ctx := context.Background()
	sock, err := os.MkdirTemp("", "pc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	h, err := host.Open(ctx, host.Config{
		StateDir:    state,
		SidecarPath: filepath.Join(bin, "palyra-sidecar"),
		Storage:     link.SkillStorage(),
		VaultKey:    vaultKey,
		Logger:      hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Name: link.NodeName()}),
		Supervisor:  supervisor.Config{SocketDir: sock, IdleTimeout: -1, MaxConcurrentCalls: 8, QueueDepth: 64},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// installExample installs the example name, built by examplebuild and
// signed by the test publisher, on h, and wants it active.
func installExample(t *testing.T, h *host.Host, name string) {
	t.Helper()
	res := installExampleResult(t, h, name)
	if res.Status != "active" {
		t.Fatalf("installed %s: status %s %v", res.SkillID, res.Status, res.Reasons)
	}
}

// installExampleResult installs the example name on h and returns the
// result, whatever the status.
func installExampleResult(t *testing.T, h *host.Host, name string) *host.InstallResult {
	t.Helper()
	m, err := os.ReadFile(filepath.Join(examplebuild.MustDir(t, name), "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(examplebuild.MustBuild(t, name))
	if err != nil {
		t.Fatal(err)
	}
	pub := hex.EncodeToString(publisherKey.Public().(ed25519.PublicKey))
	res, err := h.Install(context.Background(), host.InstallRequest{
		Artifact:          testskill.Build(t, string(m), mod, publisherKey),
		TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: pub}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type counterOut struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

func callCounter(ctx context.Context, h *host.Host, tool, name string) (counterOut, error) {
	res, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.kv_counter", ToolID: tool, Input: json.RawMessage(`{"name":"` + name + `"}`)})
	if err != nil {
		return counterOut{}, err
	}
	if res.ToolError != nil {
		return counterOut{}, fmt.Errorf("%s: tool error %+v", tool, *res.ToolError)
	}
	var out counterOut
	if err := json.Unmarshal(res.Output, &out); err != nil {
		return counterOut{}, fmt.Errorf("%s output %s: %w", tool, res.Output, err)
	}
	return out, nil
}

// TestKVCounterAcrossNodes: three nodes, each a host with its own state
// dir over the cluster's storage bucket, run kv-counter's increment 100
// times each from 8 concurrent callers: the counter ends at exactly 300
// on every node (no lost update), and every increment saw a distinct
// count (each one swapped from the value before it).
func TestKVCounterAcrossNodes(t *testing.T) {
	const nodes, perNode = 3, 100
	// 24 callers contending on one key; under the race detector, 6: each
	// call must finish its compare-and-swap loop within the skill's 5 s
	// wall clock, and three instrumented nodes with their nats-servers on
	// two loaded cores made a KV read outlast it (with 12 callers, twice).
	callers := 8
	if raceBuild {
		callers = 2
	}
	ctx := context.Background()
	links := dialCluster(t, nodes)
	hosts := make([]*host.Host, nodes)
	for i, l := range links {
		hosts[i] = openNodeHost(t, l)
		installExample(t, hosts[i], "kv-counter")
	}
	var mu sync.Mutex
	seen := map[int64]int{}
	start := time.Now()
	errs := make(chan error, nodes*callers)
	var wg sync.WaitGroup
	for n, h := range hosts {
		for c := range callers {
			todo := perNode / callers
			if c < perNode%callers {
				todo++
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range todo {
					out, err := callCounter(ctx, h, "palyra.increment", "visits")
					if err != nil {
						errs <- fmt.Errorf("node %d: %w", n, err)
						return
					}
					mu.Lock()
					seen[out.Count]++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d increments from %d callers on %d nodes in %s", nodes*perNode, nodes*callers, nodes, time.Since(start))
	for i, h := range hosts {
		out, err := callCounter(ctx, h, "palyra.get", "visits")
		if err != nil {
			t.Fatal(err)
		}
		if out.Count != nodes*perNode {
			t.Errorf("node %d counts %d, want %d", i, out.Count, nodes*perNode)
		}
	}
	for n := int64(1); n <= nodes*perNode; n++ {
		if seen[n] != 1 {
			t.Errorf("count %d returned %d times, want once", n, seen[n])
		}
	}
}

// TestKVStorageCASOneWinner: in each round the three nodes' backends swap
// one key from the same expected value at once; exactly one swaps, and the
// others are told the winner's value; with two nodes gone, a write fails
// with cluster_unavailable.
func TestKVStorageCASOneWinner(t *testing.T) {
	const rounds = 20
	ctx := context.Background()
	links := dialCluster(t, 3)
	key := "c/race"
	var prev []byte // absent at first
	for r := range rounds {
		results := make([]storage.CASResult, len(links))
		errs := make([]error, len(links))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, l := range links {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = l.SkillStorage().CompareAndSwap(ctx, "acme.race", key, prev, []byte(fmt.Sprintf("r%d-n%d", r, i)), storage.Quota{MaxKeys: 1})
			}()
		}
		close(start)
		wg.Wait()
		winners := 0
		var won []byte
		for i, res := range results {
			if errs[i] != nil {
				t.Fatalf("round %d node %d: %v", r, i, errs[i])
			}
			if res.Swapped {
				winners++
				won = res.Current
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d winners, want 1", r, winners)
		}
		for i, res := range results {
			if !res.Swapped && string(res.Current) != string(won) {
				t.Fatalf("round %d node %d lost and saw %q, the winner wrote %q", r, i, res.Current, won)
			}
		}
		for i, l := range links {
			v, _, err := l.SkillStorage().Get(ctx, "acme.race", key)
			if err != nil || string(v) != string(won) {
				t.Fatalf("round %d: node %d reads %q %v, want %q", r, i, v, err, won)
			}
		}
		prev = won
	}
	// With two of three nodes gone the bucket has no quorum: a write fails
	// with cluster_unavailable, within the caller's deadline.
	links[1].Close()
	links[2].Close()
	c, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err := links[0].SkillStorage().Put(c, "acme.race", key, []byte("x"), storage.Quota{})
	if !errors.Is(err, ErrClusterUnavailable) {
		t.Errorf("put without quorum: %v, want cluster_unavailable", err)
	}
}
