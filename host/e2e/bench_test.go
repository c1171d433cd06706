package e2e_test

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/internal/testskill"
)

//go:embed testdata/caploop0.wasm
var caploop0Wasm []byte

//go:embed testdata/caploop100.wasm
var caploop100Wasm []byte

const caploopManifest = `manifest_version = 2
skill_id = "acme.%s"
name = "Capability loop"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.loop"
name = "loop"
description = "Sends to its channel in a loop"
input_schema = { type = "object" }
output_schema = { type = "object" }

[capabilities]
channels = ["bench"]

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`

// BenchmarkCapabilityRoundTrip measures one capability-call round trip
// (guest -> sidecar -> GRPCBroker -> host broker -> no-op channel -> back)
// as the difference between a call making 100 of them and a call making
// none, interleaved in one run: round_trip_median_ns is
// (median(100 calls) - median(0 calls)) / 100.
func BenchmarkCapabilityRoundTrip(b *testing.B) {
	h := openHost(b, b.TempDir(), testProfile(b, 443, ""))
	if err := h.Channels().Register("bench", channels.ChannelFunc(func(context.Context, channels.Message) error { return nil })); err != nil {
		b.Fatal(err)
	}
	installArtifact(b, h, testskill.Build(b, fmtManifest("cap0"), caploop0Wasm, publisherKey))
	installArtifact(b, h, testskill.Build(b, fmtManifest("cap100"), caploop100Wasm, publisherKey))
	ctx := context.Background()
	call := func(id string) time.Duration {
		start := time.Now()
		if _, err := h.Call(ctx, host.CallRequest{SkillID: id, ToolID: "acme.loop", Input: json.RawMessage(`{}`)}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for range 5 { // warm both sidecars
		call("acme.cap0")
		call("acme.cap100")
	}
	var d0, d100 []time.Duration
	b.ResetTimer()
	for range b.N {
		d0 = append(d0, call("acme.cap0"))
		d100 = append(d100, call("acme.cap100"))
	}
	b.StopTimer()
	m0, m100 := median(d0), median(d100)
	b.ReportMetric(float64(m0.Nanoseconds()), "call_0_median_ns")
	b.ReportMetric(float64(m100.Nanoseconds()), "call_100_median_ns")
	b.ReportMetric(float64((m100-m0).Nanoseconds())/100, "round_trip_median_ns")
}

func fmtManifest(name string) string {
	return fmt.Sprintf(caploopManifest, name)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
