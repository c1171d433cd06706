package telemetry

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"
)

// Source is where the scrape-time metrics come from, read at every
// scrape; a nil Source gives none. A daemon adapts its *host.Host:
// AllStats is host.Host.AllStats, SidecarStates the supervisor's States.
// Both must be safe for concurrent use and must not block.
type Source interface {
	// AllStats returns every skill's call and capability counters.
	AllStats() map[string]host.SkillStats
	// SidecarStates returns the state of every skill version's sidecar.
	SidecarStates() []supervisor.State
}

// Call is one finished tool call, as ObserveCall records it.
type Call struct {
	SkillID, Version, ToolID string
	// Code is errcode.Of of the call's error: "" for a success.
	Code string
	// Duration is the call's wall time as the host measured it.
	Duration time.Duration
	// FuelConsumed and PeakMemoryBytes are from the call's
	// supervisor.Stats; zero when the call never reached a sidecar, and
	// then not observed.
	FuelConsumed    uint64
	PeakMemoryBytes uint64
}

// Histogram buckets.
var (
	// durationBuckets are the seconds buckets of call, request and hook
	// durations: 100 µs to 30 s.
	durationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	// fuelBuckets are the fuel buckets: 1e3 to 1e10.
	fuelBuckets = prometheus.ExponentialBuckets(1e3, 10, 8)
	// memoryBuckets are the peak memory buckets: 64 KiB (one WebAssembly
	// page) to 4 GiB (a 32-bit memory's maximum), by powers of 4.
	memoryBuckets = prometheus.ExponentialBuckets(64<<10, 4, 9)
)

// Metrics is the daemon's metrics registry. Make one with New.
type Metrics struct {
	reg   *prometheus.Registry
	codes codes

	calls        *prometheus.CounterVec
	callDuration *prometheus.HistogramVec
	fuel         *prometheus.HistogramVec
	peakMemory   *prometheus.HistogramVec
	requests     *prometheus.CounterVec
	reqDuration  *prometheus.HistogramVec
	hooks        *prometheus.CounterVec
	hookDuration *prometheus.HistogramVec
	quarantines  *prometheus.CounterVec
	reaudits     *prometheus.CounterVec
}

// NodeLabel is the constant label New puts on every metric: the name of
// the node that exports it (a cluster node's name, or the machine's host
// name for a daemon that is not clustered), so that one Prometheus can
// scrape every node of a cluster and tell their series apart.
const NodeLabel = "node"

// New returns Metrics registered on a registry of their own, together with
// the Go runtime and process collectors and a collector that reads src at
// every scrape. Every metric carries the constant label node=node (none
// when node is ""). Codes are checked against those registered with
// errcode when New runs, so call it from main, not from a package's init.
func New(src Source, node string) *Metrics {
	m := &Metrics{
		reg:   prometheus.NewRegistry(),
		codes: knownCodes(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palyra_skill_calls_total",
			Help: "Tool calls by skill, version, tool and outcome code (ok for a success).",
		}, []string{"skill_id", "version", "tool_id", "code"}),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "palyra_skill_call_duration_seconds",
			Help:    "Wall time of tool calls as the host measured it.",
			Buckets: durationBuckets,
		}, []string{"skill_id"}),
		fuel: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "palyra_skill_fuel_consumed",
			Help:    "Fuel consumed by tool calls that reached a sidecar.",
			Buckets: fuelBuckets,
		}, []string{"skill_id"}),
		peakMemory: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "palyra_skill_peak_memory_bytes",
			Help:    "Peak linear memory of tool calls that reached a sidecar.",
			Buckets: memoryBuckets,
		}, []string{"skill_id"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palyra_api_requests_total",
			Help: "Requests served by the daemon's APIs, by API, route pattern and status code.",
		}, []string{"api", "route", "code"}),
		reqDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "palyra_api_request_duration_seconds",
			Help:    "Time to serve a request of the daemon's APIs.",
			Buckets: durationBuckets,
		}, []string{"api", "route"}),
		hooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palyra_hook_dispatches_total",
			Help: "Hook dispatches by event and result (the hook's decision, or an error code).",
		}, []string{"event", "result"}),
		hookDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "palyra_hook_dispatch_duration_seconds",
			Help:    "Time to dispatch a hook event.",
			Buckets: durationBuckets,
		}, []string{"event"}),
		quarantines: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palyra_anomaly_quarantines_total",
			Help: "Skills quarantined by the runtime anomaly detector, by kind of anomaly.",
		}, []string{"skill_id", "kind"}),
		reaudits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "palyra_reaudit_runs_total",
			Help: "Re-audit runs of installed skills, by result.",
		}, []string{"result"}),
	}
	var reg prometheus.Registerer = m.reg
	if node != "" {
		reg = prometheus.WrapRegistererWith(prometheus.Labels{NodeLabel: label(node)}, m.reg)
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.calls, m.callDuration, m.fuel, m.peakMemory,
		m.requests, m.reqDuration, m.hooks, m.hookDuration,
		m.quarantines, m.reaudits,
		newSourceCollector(src, m.codes),
	)
	return m
}

// Registry returns the registry, to register more collectors on it (they
// do not get the node label) or to gather it directly.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition formats.
// Collection errors are reported in the response and do not hide the
// metrics that were collected.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          m.reg,
		EnableOpenMetrics: true,
	})
}

// ObserveCall records one finished tool call.
func (m *Metrics) ObserveCall(c Call) {
	if m == nil {
		return
	}
	skill := label(c.SkillID)
	m.calls.WithLabelValues(skill, label(c.Version), label(c.ToolID), m.codes.code(c.Code)).Inc()
	m.callDuration.WithLabelValues(skill).Observe(c.Duration.Seconds())
	if c.FuelConsumed > 0 {
		m.fuel.WithLabelValues(skill).Observe(float64(c.FuelConsumed))
	}
	if c.PeakMemoryBytes > 0 {
		m.peakMemory.WithLabelValues(skill).Observe(float64(c.PeakMemoryBytes))
	}
}

// ObserveRequest records one request served by the API api ("http",
// "grpc", "mcp", ...) on the route pattern route, answered with code (an
// HTTP status, or a gRPC code number) after d.
func (m *Metrics) ObserveRequest(api, route string, code int, d time.Duration) {
	if m == nil {
		return
	}
	api, route = label(api), label(route)
	m.requests.WithLabelValues(api, route, strconv.Itoa(code)).Inc()
	m.reqDuration.WithLabelValues(api, route).Observe(d.Seconds())
}

// ObserveHook records one dispatch of a hook event (gateway:startup,
// skill:quarantined, ...) whose result is the hook's decision or the error
// code of its failure, after d.
func (m *Metrics) ObserveHook(event, result string, d time.Duration) {
	if m == nil {
		return
	}
	event = label(event)
	m.hooks.WithLabelValues(event, label(result)).Inc()
	m.hookDuration.WithLabelValues(event).Observe(d.Seconds())
}

// ObserveAnomalyQuarantine records that the anomaly detector quarantined
// skillID for an anomaly of kind (an anomaly.Kind).
func (m *Metrics) ObserveAnomalyQuarantine(skillID, kind string) {
	if m == nil {
		return
	}
	m.quarantines.WithLabelValues(label(skillID), reason(kind)).Inc()
}

// ObserveReaudit records one re-audit run with its result ("pass",
// "quarantined", or an error code).
func (m *Metrics) ObserveReaudit(result string) {
	if m == nil {
		return
	}
	m.reaudits.WithLabelValues(label(result)).Inc()
}
