package cluster

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestDialSingleEmbedded(t *testing.T) {
	ctx := context.Background()
	l, err := Dial(ctx, Config{NodeName: "solo", Embedded: &EmbeddedConfig{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.JetStream().Publish(ctx, OpsSubjectPrefix+"test", []byte("x")); err != nil {
		t.Fatal(err)
	}
}

func TestDialThreeEmbedded(t *testing.T) {
	ctx := context.Background()
	cfgs := embeddedConfigs(t, 3)
	start := time.Now()
	var wg sync.WaitGroup
	links := make([]*Link, 3)
	errs := make([]error, 3)
	for i := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			links[i], errs[i] = Dial(ctx, cfgs[i])
		}()
	}
	wg.Wait()
	for i := range links {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		defer links[i].Close()
	}
	t.Logf("3 nodes up in %s", time.Since(start))
	if got := links[0].Config().Replicas; got != 3 {
		t.Fatalf("replicas %d, want 3", got)
	}
	if _, err := links[1].JetStream().Publish(ctx, OpsSubjectPrefix+"test", []byte("x")); err != nil {
		t.Fatal(err)
	}
	info, err := links[2].Ops().Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Cluster.Replicas) != 2 {
		t.Fatalf("ops stream replicas %+v", info.Cluster)
	}
}

// TestDefaultReplicas: min(3, servers), whether the routes list this node
// or not.
func TestDefaultReplicas(t *testing.T) {
	for _, tc := range []struct {
		routes []string
		want   int
	}{
		{nil, 1},
		{[]string{"nats-route://127.0.0.1:6222"}, 1},
		{[]string{"nats-route://127.0.0.1:6222", "nats-route://127.0.0.1:6223"}, 2},
		{[]string{"nats-route://127.0.0.1:6223"}, 2},
		{[]string{"nats-route://127.0.0.1:6222", "nats-route://127.0.0.1:6223", "nats-route://127.0.0.1:6224"}, 3},
		{[]string{"nats-route://127.0.0.1:6223", "nats-route://127.0.0.1:6224", "nats-route://127.0.0.1:6225", "nats-route://127.0.0.1:6226"}, 3},
	} {
		c := Config{NodeName: "a", Embedded: &EmbeddedConfig{StoreDir: "x", RouteListen: "127.0.0.1:6222", Routes: tc.routes}}
		if got := c.withDefaults().Replicas; got != tc.want {
			t.Errorf("routes %v: replicas %d, want %d", tc.routes, got, tc.want)
		}
	}
}
