package telemetry_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/broker"
	"github.com/palyra-go/palyra/host/daemon/internal/telemetry"
	"github.com/palyra-go/palyra/host/supervisor"
)

// source stands for the daemon's adapter of its *host.Host.
type source struct{}

func (source) AllStats() map[string]host.SkillStats {
	return map[string]host.SkillStats{"acme.fetch": {
		Calls:        3,
		Errors:       map[string]int64{"capability_denied": 1},
		Capabilities: broker.Stats{Denials: map[string]int64{"private_address": 1}, EgressBytesIn: 512},
	}}
}

func (source) SidecarStates() []supervisor.State {
	return []supervisor.State{{SkillID: "acme.fetch", Version: "1.2.0", Status: supervisor.StatusRunning, InFlight: 1}}
}

func Example() {
	m := telemetry.New(source{}, "node-a")
	// After each call, with errcode.Of(err) and the call's stats.
	m.ObserveCall(telemetry.Call{
		SkillID: "acme.fetch", Version: "1.2.0", ToolID: "get",
		Duration: 40 * time.Millisecond, FuelConsumed: 120_000, PeakMemoryBytes: 2 << 20,
	})

	// The daemon serves m.Handler() on GET /telemetry.
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		for _, name := range []string{"palyra_skill_calls_total{", "palyra_capability_denials_total{", "palyra_egress_bytes_total{", "palyra_sidecar_in_flight{", "palyra_sidecars_alive{"} {
			if strings.HasPrefix(line, name) {
				fmt.Println(line)
			}
		}
	}
	// Output:
	// palyra_capability_denials_total{node="node-a",reason="private_address",skill_id="acme.fetch"} 1
	// palyra_egress_bytes_total{direction="in",node="node-a",skill_id="acme.fetch"} 512
	// palyra_egress_bytes_total{direction="out",node="node-a",skill_id="acme.fetch"} 0
	// palyra_sidecar_in_flight{node="node-a",skill_id="acme.fetch",version="1.2.0"} 1
	// palyra_sidecars_alive{node="node-a"} 1
	// palyra_skill_calls_total{code="ok",node="node-a",skill_id="acme.fetch",tool_id="get",version="1.2.0"} 1
}
