package cluster_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/cluster"
)

// A node of a three-node cluster with embedded NATS: an install on this
// node is appended to the cluster's ops stream and installed by every
// node, each verifying the artifact itself. The other nodes run the same
// code with their own names, state dirs and route listeners.
func ExampleNode_Install() {
	ctx := context.Background()
	routes := []string{"nats-route://10.0.0.1:6222", "nats-route://10.0.0.2:6222", "nats-route://10.0.0.3:6222"}
	// The link first: the node joins the cluster and finds (or makes) the
	// streams and buckets.
	link, err := cluster.Dial(ctx, cluster.Config{
		NodeName: "a",
		Embedded: &cluster.EmbeddedConfig{
			StoreDir: "/var/lib/palyra/a/nats", Listen: "127.0.0.1:4222",
			RouteListen: "10.0.0.1:6222", Routes: routes,
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close()
	// Then the local host, on this node's own state dir.
	h, err := host.Open(ctx, host.Config{StateDir: "/var/lib/palyra/a", SidecarPath: "/usr/local/bin/palyra-sidecar"})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)
	// The node applies every op the cluster holds before NewNode returns.
	node, err := cluster.NewNode(ctx, link, h, cluster.NodeOptions{Version: "1.0.0"})
	if err != nil {
		log.Fatal(err)
	}
	defer node.Close(ctx)

	data, err := os.ReadFile("echo.palyra-skill")
	if err != nil {
		log.Fatal(err)
	}
	// Install returns once this node applied the op; every other node
	// applies it too and shows it in its List (the ops stream position
	// each node applied is its Applied).
	res, err := node.Install(ctx, host.InstallRequest{Artifact: data, AllowTOFU: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.SkillID, res.Version, node.Applied())
}
