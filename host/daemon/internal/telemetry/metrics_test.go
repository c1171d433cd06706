package telemetry

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/broker"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/codescan"
)

// fakeSource is a Source with fixed counters.
type fakeSource struct {
	stats  map[string]host.SkillStats
	states []supervisor.State
}

func (f *fakeSource) AllStats() map[string]host.SkillStats { return f.stats }
func (f *fakeSource) SidecarStates() []supervisor.State    { return f.states }

func newFake() *fakeSource {
	return &fakeSource{
		stats: map[string]host.SkillStats{
			"acme.fetch": {
				Calls:  12,
				Errors: map[string]int64{"fuel_exhausted": 2, "capability_denied": 3, "made_up_by_sidecar": 1, "another\xffone": 4},
				Capabilities: broker.Stats{
					Invocations:     12,
					CapabilityCalls: map[string]int64{"http": 9, "secret": 2},
					Denials:         map[string]int64{"host_not_allowed": 2, "private_address": 1},
					Failures:        map[string]int64{"timeout": 1},
					HTTPRequests:    7, EgressBytesOut: 2048, EgressBytesIn: 65536,
					SecretInjections: 5, SecretReads: 0,
					StorageKeys: 3, StorageBytes: 1500,
					ChannelMessages: 1,
				},
			},
			"acme.echo": {
				Calls:        4,
				Errors:       map[string]int64{},
				Capabilities: broker.Stats{CapabilityCalls: map[string]int64{}, Denials: map[string]int64{}, Failures: map[string]int64{}},
			},
		},
		states: []supervisor.State{
			{SkillID: "acme.echo", Version: "1.0.0", Status: supervisor.StatusRunning, PID: 100, Restarts: 1, Crashes: 1, InFlight: 2, Queued: 1,
				Hardening: &supervisor.Hardening{Enabled: true, Supported: true, NoNewPrivs: true, SeccompMode: 2, Landlock: "full", CapsDropped: true}},
			{SkillID: "acme.fetch", Version: "2.0.0", Status: supervisor.StatusRunning, PID: 101, Hardening: &supervisor.Hardening{}},
			{SkillID: "acme.fetch", Version: "1.9.0", Status: supervisor.StatusCrashLooping, Restarts: 4, Crashes: 5},
			{SkillID: "acme.old", Version: "0.1.0", Status: supervisor.StatusStopped},
		},
	}
}

func TestSourceMetrics(t *testing.T) {
	m := New(newFake(), "")
	want := `
# HELP palyra_skill_errors_total Failed tool calls by skill and error code.
# TYPE palyra_skill_errors_total counter
palyra_skill_errors_total{code="capability_denied",skill_id="acme.fetch"} 3
palyra_skill_errors_total{code="fuel_exhausted",skill_id="acme.fetch"} 2
palyra_skill_errors_total{code="unregistered",skill_id="acme.fetch"} 5
# HELP palyra_capability_calls_total Capability operations whose handle resolved, by skill and kind (http, secret, storage, channel).
# TYPE palyra_capability_calls_total counter
palyra_capability_calls_total{kind="http",skill_id="acme.fetch"} 9
palyra_capability_calls_total{kind="secret",skill_id="acme.fetch"} 2
# HELP palyra_capability_denials_total Capability operations the broker denied, by skill and reason.
# TYPE palyra_capability_denials_total counter
palyra_capability_denials_total{reason="host_not_allowed",skill_id="acme.fetch"} 2
palyra_capability_denials_total{reason="private_address",skill_id="acme.fetch"} 1
# HELP palyra_capability_failures_total Capability operations that failed without a denial, by skill and reason.
# TYPE palyra_capability_failures_total counter
palyra_capability_failures_total{reason="timeout",skill_id="acme.fetch"} 1
# HELP palyra_egress_bytes_total HTTP body bytes sent (out) and received (in) for skills.
# TYPE palyra_egress_bytes_total counter
palyra_egress_bytes_total{direction="in",skill_id="acme.echo"} 0
palyra_egress_bytes_total{direction="in",skill_id="acme.fetch"} 65536
palyra_egress_bytes_total{direction="out",skill_id="acme.echo"} 0
palyra_egress_bytes_total{direction="out",skill_id="acme.fetch"} 2048
# HELP palyra_egress_requests_total HTTP requests sent for skills, redirect hops included.
# TYPE palyra_egress_requests_total counter
palyra_egress_requests_total{skill_id="acme.echo"} 0
palyra_egress_requests_total{skill_id="acme.fetch"} 7
# HELP palyra_storage_bytes Bytes a skill has stored, as of its last storage write.
# TYPE palyra_storage_bytes gauge
palyra_storage_bytes{skill_id="acme.echo"} 0
palyra_storage_bytes{skill_id="acme.fetch"} 1500
# HELP palyra_secret_injections_total Secret values the broker injected into skills' requests.
# TYPE palyra_secret_injections_total counter
palyra_secret_injections_total{skill_id="acme.echo"} 0
palyra_secret_injections_total{skill_id="acme.fetch"} 5
# HELP palyra_sidecar_restarts_total Sidecar starts after the first, by skill version.
# TYPE palyra_sidecar_restarts_total counter
palyra_sidecar_restarts_total{skill_id="acme.echo",version="1.0.0"} 1
palyra_sidecar_restarts_total{skill_id="acme.fetch",version="1.9.0"} 4
palyra_sidecar_restarts_total{skill_id="acme.fetch",version="2.0.0"} 0
palyra_sidecar_restarts_total{skill_id="acme.old",version="0.1.0"} 0
# HELP palyra_sidecar_crashes_total Sidecar crashes, by skill version.
# TYPE palyra_sidecar_crashes_total counter
palyra_sidecar_crashes_total{skill_id="acme.echo",version="1.0.0"} 1
palyra_sidecar_crashes_total{skill_id="acme.fetch",version="1.9.0"} 5
palyra_sidecar_crashes_total{skill_id="acme.fetch",version="2.0.0"} 0
palyra_sidecar_crashes_total{skill_id="acme.old",version="0.1.0"} 0
# HELP palyra_sidecar_in_flight Calls running in a skill version's sidecar.
# TYPE palyra_sidecar_in_flight gauge
palyra_sidecar_in_flight{skill_id="acme.echo",version="1.0.0"} 2
palyra_sidecar_in_flight{skill_id="acme.fetch",version="1.9.0"} 0
palyra_sidecar_in_flight{skill_id="acme.fetch",version="2.0.0"} 0
palyra_sidecar_in_flight{skill_id="acme.old",version="0.1.0"} 0
# HELP palyra_sidecar_hardening 1 for the hardening level a skill version's last sidecar reported: full, partial, unsupported (no hardening on this system) or off (turned off by the operator).
# TYPE palyra_sidecar_hardening gauge
palyra_sidecar_hardening{level="full",skill_id="acme.echo",version="1.0.0"} 1
palyra_sidecar_hardening{level="off",skill_id="acme.fetch",version="2.0.0"} 1
# HELP palyra_sidecars Skill versions known to the supervisor, by sidecar status.
# TYPE palyra_sidecars gauge
palyra_sidecars{status="crashlooping"} 1
palyra_sidecars{status="running"} 2
palyra_sidecars{status="starting"} 0
palyra_sidecars{status="stopped"} 1
# HELP palyra_sidecars_alive Sidecar processes running.
# TYPE palyra_sidecars_alive gauge
palyra_sidecars_alive 2
# HELP palyra_metrics_skills_dropped Skill ids left out of this scrape because there were more than the package's cap.
# TYPE palyra_metrics_skills_dropped gauge
palyra_metrics_skills_dropped 0
`
	names := []string{
		"palyra_skill_errors_total", "palyra_capability_calls_total", "palyra_capability_denials_total",
		"palyra_capability_failures_total", "palyra_egress_bytes_total", "palyra_egress_requests_total",
		"palyra_storage_bytes", "palyra_secret_injections_total", "palyra_sidecar_restarts_total",
		"palyra_sidecar_crashes_total", "palyra_sidecar_in_flight", "palyra_sidecar_hardening", "palyra_sidecars", "palyra_sidecars_alive",
		"palyra_metrics_skills_dropped",
	}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	// Every scrape reads the source again: counters move, nothing is kept.
	src := newFake()
	m = New(src, "")
	s := src.stats["acme.fetch"]
	s.Errors["fuel_exhausted"] = 10
	if got := gatherValue(t, m, "palyra_skill_errors_total", map[string]string{"skill_id": "acme.fetch", "code": "fuel_exhausted"}); got != 10 {
		t.Errorf("fuel_exhausted errors = %v after the source moved, want 10", got)
	}
}

func TestNilSource(t *testing.T) {
	m := New(nil, "")
	if n, err := testutil.GatherAndCount(m.Registry(), "palyra_sidecars_alive", "palyra_skill_errors_total"); err != nil || n != 0 {
		t.Errorf("a nil source gave %d metrics, %v", n, err)
	}
}

func TestObserveCall(t *testing.T) {
	m := New(nil, "")
	m.ObserveCall(Call{SkillID: "acme.fetch", Version: "2.0.0", ToolID: "get", Duration: 3 * time.Millisecond, FuelConsumed: 25_000, PeakMemoryBytes: 3 << 20})
	m.ObserveCall(Call{SkillID: "acme.fetch", Version: "2.0.0", ToolID: "get", Code: "fuel_exhausted", Duration: 2 * time.Second, FuelConsumed: 1e9, PeakMemoryBytes: 3 << 20})
	m.ObserveCall(Call{SkillID: "acme.fetch", Version: "2.0.0", ToolID: "get", Code: "sidecar says\nhi", Duration: time.Second})
	// Never reached a sidecar: no fuel or memory observed.
	m.ObserveCall(Call{SkillID: "acme.fetch", Version: "2.0.0", ToolID: "get", Code: "skill_quarantined"})

	want := `
# HELP palyra_skill_calls_total Tool calls by skill, version, tool and outcome code (ok for a success).
# TYPE palyra_skill_calls_total counter
palyra_skill_calls_total{code="fuel_exhausted",skill_id="acme.fetch",tool_id="get",version="2.0.0"} 1
palyra_skill_calls_total{code="ok",skill_id="acme.fetch",tool_id="get",version="2.0.0"} 1
palyra_skill_calls_total{code="skill_quarantined",skill_id="acme.fetch",tool_id="get",version="2.0.0"} 1
palyra_skill_calls_total{code="unregistered",skill_id="acme.fetch",tool_id="get",version="2.0.0"} 1
# HELP palyra_skill_fuel_consumed Fuel consumed by tool calls that reached a sidecar.
# TYPE palyra_skill_fuel_consumed histogram
palyra_skill_fuel_consumed_bucket{skill_id="acme.fetch",le="1000"} 0
palyra_skill_fuel_consumed_bucket{skill_id="acme.fetch",le="10000"} 0
palyra_skill_fuel_consumed_bucket{skill_id="acme.fetch",le="100000"} 1
palyra_skill_fuel_consumed_bucket{skill_id="acme.fetch",le="1e+06"} 1
palyra_skill_fuel_consumed_bucket{skill_id="acme.fetch",le="1e+07"} 1
palyra_skill_fuel_consumed_bucket{skill_id="acme.fetch",le="1e+08"} 1
palyra_skill_fuel_consumed_bucket{skill_id="acme.fetch",le="1e+09"} 2
palyra_skill_fuel_consumed_bucket{skill_id="acme.fetch",le="1e+10"} 2
palyra_skill_fuel_consumed_bucket{skill_id="acme.fetch",le="+Inf"} 2
palyra_skill_fuel_consumed_sum{skill_id="acme.fetch"} 1.000025e+09
palyra_skill_fuel_consumed_count{skill_id="acme.fetch"} 2
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "palyra_skill_calls_total", "palyra_skill_fuel_consumed"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(m.callDuration); n != 1 {
		t.Errorf("%d duration series, want 1 (by skill only)", n)
	}
	if got := histogramCount(t, m, "palyra_skill_call_duration_seconds"); got != 4 {
		t.Errorf("duration count = %d, want 4", got)
	}
	if got := histogramCount(t, m, "palyra_skill_peak_memory_bytes"); got != 2 {
		t.Errorf("peak memory count = %d, want 2", got)
	}
}

func TestObserveOthers(t *testing.T) {
	m := New(nil, "")
	m.ObserveRequest("http", "GET /v1/skills", 200, 4*time.Millisecond)
	m.ObserveRequest("http", "GET /v1/skills", 200, 6*time.Millisecond)
	m.ObserveRequest("http", "POST /v1/skills/{id}/call", 429, time.Millisecond)
	m.ObserveHook("skill:quarantined", "allow", 20*time.Millisecond)
	m.ObserveHook("skill:quarantined", "timeout", 10*time.Second)
	m.ObserveAnomalyQuarantine("acme.fetch", "fuel_exhausted")
	m.ObserveAnomalyQuarantine("acme.fetch", "Free text, never a label")
	m.ObserveReaudit("ok")
	m.ObserveReaudit("ok")
	m.ObserveReaudit("error")

	checks := []struct {
		name string
		got  float64
		want float64
	}{
		{"requests 200", testutil.ToFloat64(m.requests.WithLabelValues("http", "GET /v1/skills", "200")), 2},
		{"requests 429", testutil.ToFloat64(m.requests.WithLabelValues("http", "POST /v1/skills/{id}/call", "429")), 1},
		{"hook allow", testutil.ToFloat64(m.hooks.WithLabelValues("skill:quarantined", "allow")), 1},
		{"hook timeout", testutil.ToFloat64(m.hooks.WithLabelValues("skill:quarantined", "timeout")), 1},
		{"quarantine kind", testutil.ToFloat64(m.quarantines.WithLabelValues("acme.fetch", "fuel_exhausted")), 1},
		{"quarantine free text folded", testutil.ToFloat64(m.quarantines.WithLabelValues("acme.fetch", UnregisteredCode)), 1},
		{"reaudit ok", testutil.ToFloat64(m.reaudits.WithLabelValues("ok")), 2},
		{"reaudit error", testutil.ToFloat64(m.reaudits.WithLabelValues("error")), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := histogramCount(t, m, "palyra_api_request_duration_seconds"); got != 3 {
		t.Errorf("request duration count = %d, want 3", got)
	}
	if got := histogramCount(t, m, "palyra_hook_dispatch_duration_seconds"); got != 2 {
		t.Errorf("hook duration count = %d, want 2", got)
	}
}

func TestNilMetricsObserveIsNoop(t *testing.T) {
	var m *Metrics
	m.ObserveCall(Call{SkillID: "s"})
	m.ObserveRequest("http", "/", 200, 0)
	m.ObserveHook("e", "r", 0)
	m.ObserveAnomalyQuarantine("s", "trap")
	m.ObserveReaudit("ok")
}

func TestLabelValues(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	tests := []struct{ in, want string }{
		{"acme.echo", "acme.echo"},
		{"bad\xff\xfeutf8", "bad\uFFFDutf8"},
		{long, strings.Repeat("é", MaxLabelBytes/2)},
		{strings.Repeat("a", 127) + "é", strings.Repeat("a", 127)}, // cut before a split rune
	}
	for _, tt := range tests {
		if got := label(tt.in); got != tt.want || len(got) > MaxLabelBytes {
			t.Errorf("label(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for in, want := range map[string]string{
		"host_not_allowed":         "host_not_allowed",
		"storage_quota_bytes":      "storage_quota_bytes",
		"Host Not Allowed":         UnregisteredCode,
		"":                         UnregisteredCode,
		strings.Repeat("a", 65):    UnregisteredCode,
		"denied: 10.0.0.1 private": UnregisteredCode,
	} {
		if got := reason(in); got != want {
			t.Errorf("reason(%q) = %q, want %q", in, got, want)
		}
	}

	// Hostile values reach no panic and no free-text series.
	m := New(nil, "")
	m.ObserveCall(Call{SkillID: "\xff" + long, Version: "\x00", ToolID: long, Code: long})
	m.ObserveRequest("\xff", long, -1, -time.Second)
	m.ObserveHook(long, "\xfe", 0)
	if n := testutil.CollectAndCount(m.calls); n != 1 {
		t.Errorf("%d call series, want 1", n)
	}
}

func TestSkillCap(t *testing.T) {
	src := &fakeSource{stats: map[string]host.SkillStats{}}
	for i := range MaxSkills + 3 {
		src.stats[fmt.Sprintf("skill%05d", i)] = host.SkillStats{Capabilities: broker.Stats{StorageBytes: int64(i)}}
	}
	m := New(src, "")
	if got := gatherValue(t, m, "palyra_metrics_skills_dropped", nil); got != 3 {
		t.Errorf("dropped = %v, want 3", got)
	}
	n, err := testutil.GatherAndCount(m.Registry(), "palyra_storage_bytes")
	if err != nil || n != MaxSkills {
		t.Errorf("%d storage series (%v), want %d", n, err, MaxSkills)
	}
}

// TestFoldedSeriesAddUp checks that values folded onto the same labels are
// added, not emitted twice (which the registry would refuse).
func TestFoldedSeriesAddUp(t *testing.T) {
	long := strings.Repeat("x", MaxLabelBytes)
	src := &fakeSource{
		stats: map[string]host.SkillStats{
			long + "a": {Errors: map[string]int64{"trap": 1}},
			long + "b": {Errors: map[string]int64{"trap": 2}},
		},
		states: []supervisor.State{
			{SkillID: long + "a", Version: "1", Crashes: 1},
			{SkillID: long + "b", Version: "1", Crashes: 2},
		},
	}
	m := New(src, "")
	if got := gatherValue(t, m, "palyra_skill_errors_total", map[string]string{"skill_id": long, "code": "trap"}); got != 3 {
		t.Errorf("folded errors = %v, want 3", got)
	}
	if got := gatherValue(t, m, "palyra_sidecar_crashes_total", map[string]string{"skill_id": long}); got != 3 {
		t.Errorf("folded crashes = %v, want 3", got)
	}
}

func TestHandler(t *testing.T) {
	m := New(newFake(), "")
	m.ObserveCall(Call{SkillID: "acme.echo", Version: "1.0.0", ToolID: "echo", Duration: 250 * time.Microsecond, FuelConsumed: 4000, PeakMemoryBytes: 1 << 16})
	m.ObserveRequest("http", "GET /metrics", 200, time.Millisecond)

	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	text := string(body)
	for _, line := range []string{
		`palyra_skill_calls_total{code="ok",skill_id="acme.echo",tool_id="echo",version="1.0.0"} 1`,
		`palyra_skill_call_duration_seconds_bucket{skill_id="acme.echo",le="0.00025"} 1`,
		`palyra_skill_call_duration_seconds_bucket{skill_id="acme.echo",le="0.0001"} 0`,
		`palyra_skill_peak_memory_bytes_bucket{skill_id="acme.echo",le="65536"} 1`,
		`palyra_api_requests_total{api="http",code="200",route="GET /metrics"} 1`,
		`palyra_capability_denials_total{reason="host_not_allowed",skill_id="acme.fetch"} 2`,
		`palyra_sidecars_alive 2`,
		`# TYPE go_goroutines gauge`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("scrape lacks %q", line)
		}
	}
	if runtime.GOOS == "linux" && !strings.Contains(text, "\nprocess_open_fds ") {
		t.Error("scrape lacks the process collector's metrics")
	}
}

// TestNodeLabel checks that every metric, the package's own (observed
// and read from the source) and the Go runtime's and the process's,
// carries the node label with the node's name, and that no node gives no
// label at all.
func TestNodeLabel(t *testing.T) {
	for _, tc := range []struct {
		node, want string
	}{
		{node: "node-a", want: "node-a"},
		{node: "", want: ""},
	} {
		t.Run("node="+tc.node, func(t *testing.T) {
			m := New(newFake(), tc.node)
			m.ObserveCall(Call{SkillID: "s", Version: "1", ToolID: "t", Duration: time.Millisecond, FuelConsumed: 1, PeakMemoryBytes: 1})
			m.ObserveRequest("http", "/", 200, time.Millisecond)
			m.ObserveHook("e", "r", time.Millisecond)
			m.ObserveAnomalyQuarantine("s", "trap")
			m.ObserveReaudit("pass")
			mfs, err := m.Registry().Gather()
			if err != nil {
				t.Fatal(err)
			}
			families := map[string]bool{}
			for _, mf := range mfs {
				families[mf.GetName()] = true
				for _, s := range mf.GetMetric() {
					got, has := "", false
					for _, l := range s.GetLabel() {
						if l.GetName() == NodeLabel {
							got, has = l.GetValue(), true
						}
					}
					if has != (tc.want != "") || got != tc.want {
						t.Fatalf("%s %v: node label %q (present %t), want %q", mf.GetName(), s.GetLabel(), got, has, tc.want)
					}
				}
			}
			// The families checked include each source of metrics.
			for _, name := range []string{"palyra_skill_calls_total", "palyra_api_requests_total", "palyra_sidecars_alive", "palyra_skill_errors_total", "go_goroutines"} {
				if !families[name] {
					t.Errorf("no %s in the scrape", name)
				}
			}
		})
	}
}

// TestLint runs promlint over the package's own metrics.
func TestLint(t *testing.T) {
	m := New(newFake(), "")
	m.ObserveCall(Call{SkillID: "s", Version: "1", ToolID: "t", Duration: time.Millisecond, FuelConsumed: 1, PeakMemoryBytes: 1})
	m.ObserveRequest("http", "/", 200, time.Millisecond)
	m.ObserveHook("e", "r", time.Millisecond)
	m.ObserveAnomalyQuarantine("s", "trap")
	m.ObserveReaudit("ok")
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "palyra_") {
			t.Errorf("%s: %s", p.Metric, p.Text)
		}
	}
}

// TestSidecarCodes checks sidecarCodes against the sidecar's sources: every
// code they define with errcode.New must be listed. The sources are parsed,
// not linked: sidecar/internal/wasmrt is cgo.
func TestSidecarCodes(t *testing.T) {
	defined, err := codescan.Codes("../../../../sidecar", "../../../../sidecar/internal/wasmrt")
	if err != nil {
		t.Fatal(err)
	}
	if len(defined) < 10 {
		t.Fatalf("found only %d codes: is the parse broken?", len(defined))
	}
	for _, c := range defined {
		if !slices.Contains(sidecarCodes, c) {
			t.Errorf("sidecar code %s is missing from sidecarCodes", c)
		}
	}
}

// gatherValue returns the sum of the counter or gauge samples of metric
// name that have the label values in want.
func gatherValue(t *testing.T, m *Metrics, name string, want map[string]string) float64 {
	t.Helper()
	sum := 0.0
	for _, s := range gatherSamples(t, m, name, want) {
		sum += s.GetCounter().GetValue() + s.GetGauge().GetValue()
	}
	return sum
}

// histogramCount returns the total count of the histogram samples of
// metric name.
func histogramCount(t *testing.T, m *Metrics, name string) uint64 {
	t.Helper()
	var n uint64
	for _, s := range gatherSamples(t, m, name, nil) {
		n += s.GetHistogram().GetSampleCount()
	}
	return n
}

func gatherSamples(t *testing.T, m *Metrics, name string, want map[string]string) []*dto.Metric {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	samples:
		for _, s := range mf.GetMetric() {
			for k, v := range want {
				if !slices.ContainsFunc(s.GetLabel(), func(l *dto.LabelPair) bool { return l.GetName() == k && l.GetValue() == v }) {
					continue samples
				}
			}
			out = append(out, s)
		}
	}
	return out
}
