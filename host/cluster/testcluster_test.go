package cluster

import (
	"fmt"
	"net"
	"testing"
)

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// embeddedConfigs returns the configs of an n-node embedded cluster on
// loopback: every node lists every route, itself included.
func embeddedConfigs(t testing.TB, n int) []Config {
	t.Helper()
	ports := freePorts(t, n)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	var out []Config
	for i := range n {
		out = append(out, Config{
			NodeName: fmt.Sprintf("n%d", i),
			Embedded: &EmbeddedConfig{
				StoreDir: t.TempDir(), Listen: "127.0.0.1:0",
				RouteListen: fmt.Sprintf("127.0.0.1:%d", ports[i]), Routes: routes,
			},
		})
	}
	return out
}
