package telemetry

import (
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"
)

// sourceCollector turns a Source's counters into constant metrics at
// scrape time.
type sourceCollector struct {
	src   Source
	codes codes

	errors, capCalls, denials, failures            *prometheus.Desc
	egressRequests, egressBytes                    *prometheus.Desc
	secretInjections, secretReads, channelMessages *prometheus.Desc
	storageBytes, storageKeys                      *prometheus.Desc
	restarts, crashes, inFlight, queued            *prometheus.Desc
	sidecars, alive, skillsDropped                 *prometheus.Desc
	hardening                                      *prometheus.Desc
}

// sidecarStatuses are the statuses palyra_sidecars reports, each every
// time (0 when no sidecar has it).
var sidecarStatuses = []supervisor.Status{
	supervisor.StatusStopped, supervisor.StatusStarting,
	supervisor.StatusRunning, supervisor.StatusCrashLooping,
}

func newSourceCollector(src Source, c codes) *sourceCollector {
	skill := []string{"skill_id"}
	sv := []string{"skill_id", "version"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &sourceCollector{
		src: src, codes: c,
		errors:           d("palyra_skill_errors_total", "Failed tool calls by skill and error code.", []string{"skill_id", "code"}),
		capCalls:         d("palyra_capability_calls_total", "Capability operations whose handle resolved, by skill and kind (http, secret, storage, channel).", []string{"skill_id", "kind"}),
		denials:          d("palyra_capability_denials_total", "Capability operations the broker denied, by skill and reason.", []string{"skill_id", "reason"}),
		failures:         d("palyra_capability_failures_total", "Capability operations that failed without a denial, by skill and reason.", []string{"skill_id", "reason"}),
		egressRequests:   d("palyra_egress_requests_total", "HTTP requests sent for skills, redirect hops included.", skill),
		egressBytes:      d("palyra_egress_bytes_total", "HTTP body bytes sent (out) and received (in) for skills.", []string{"skill_id", "direction"}),
		secretInjections: d("palyra_secret_injections_total", "Secret values the broker injected into skills' requests.", skill),
		secretReads:      d("palyra_secret_reads_total", "Secret values handed to skills.", skill),
		channelMessages:  d("palyra_channel_messages_total", "Channel messages delivered for skills.", skill),
		storageBytes:     d("palyra_storage_bytes", "Bytes a skill has stored, as of its last storage write.", skill),
		storageKeys:      d("palyra_storage_keys", "Keys a skill has stored, as of its last storage write.", skill),
		restarts:         d("palyra_sidecar_restarts_total", "Sidecar starts after the first, by skill version.", sv),
		crashes:          d("palyra_sidecar_crashes_total", "Sidecar crashes, by skill version.", sv),
		inFlight:         d("palyra_sidecar_in_flight", "Calls running in a skill version's sidecar.", sv),
		queued:           d("palyra_sidecar_queued", "Calls waiting for a skill version's sidecar.", sv),
		sidecars:         d("palyra_sidecars", "Skill versions known to the supervisor, by sidecar status.", []string{"status"}),
		alive:            d("palyra_sidecars_alive", "Sidecar processes running.", nil),
		hardening:        d("palyra_sidecar_hardening", "1 for the hardening level a skill version's last sidecar reported: full, partial, unsupported (no hardening on this system) or off (turned off by the operator).", []string{"skill_id", "version", "level"}),
		skillsDropped:    d("palyra_metrics_skills_dropped", "Skill ids left out of this scrape because there were more than the package's cap.", nil),
	}
}

// Describe implements prometheus.Collector.
func (c *sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.errors, c.capCalls, c.denials, c.failures,
		c.egressRequests, c.egressBytes,
		c.secretInjections, c.secretReads, c.channelMessages,
		c.storageBytes, c.storageKeys,
		c.restarts, c.crashes, c.inFlight, c.queued,
		c.sidecars, c.alive, c.skillsDropped, c.hardening,
	} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *sourceCollector) Collect(ch chan<- prometheus.Metric) {
	if c.src == nil {
		return
	}
	c.collectStats(ch, c.src.AllStats())
	c.collectSidecars(ch, c.src.SidecarStates())
}

func (c *sourceCollector) collectStats(ch chan<- prometheus.Metric, all map[string]host.SkillStats) {
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	dropped := 0
	if len(ids) > MaxSkills {
		dropped = len(ids) - MaxSkills
		ids = ids[:MaxSkills]
	}
	ch <- prometheus.MustNewConstMetric(c.skillsDropped, prometheus.GaugeValue, float64(dropped))

	counter := func(d *prometheus.Desc) *series { return newSeries(d, prometheus.CounterValue) }
	var (
		errors, capCalls, denials, failures = counter(c.errors), counter(c.capCalls), counter(c.denials), counter(c.failures)
		egressRequests, egressBytes         = counter(c.egressRequests), counter(c.egressBytes)
		injections, reads, messages         = counter(c.secretInjections), counter(c.secretReads), counter(c.channelMessages)
		storageBytes                        = newSeries(c.storageBytes, prometheus.GaugeValue)
		storageKeys                         = newSeries(c.storageKeys, prometheus.GaugeValue)
	)
	for _, id := range ids {
		s := all[id]
		skill := label(id)
		for code, n := range s.Errors {
			errors.add(float64(n), skill, c.codes.code(code))
		}
		b := s.Capabilities
		for kind, n := range b.CapabilityCalls {
			capCalls.add(float64(n), skill, reason(kind))
		}
		for r, n := range b.Denials {
			denials.add(float64(n), skill, reason(r))
		}
		for r, n := range b.Failures {
			failures.add(float64(n), skill, reason(r))
		}
		egressRequests.add(float64(b.HTTPRequests), skill)
		egressBytes.add(float64(b.EgressBytesOut), skill, "out")
		egressBytes.add(float64(b.EgressBytesIn), skill, "in")
		injections.add(float64(b.SecretInjections), skill)
		reads.add(float64(b.SecretReads), skill)
		messages.add(float64(b.ChannelMessages), skill)
		storageBytes.add(float64(b.StorageBytes), skill)
		storageKeys.add(float64(b.StorageKeys), skill)
	}
	for _, s := range []*series{errors, capCalls, denials, failures, egressRequests, egressBytes, injections, reads, messages, storageBytes, storageKeys} {
		s.emit(ch)
	}
}

func (c *sourceCollector) collectSidecars(ch chan<- prometheus.Metric, states []supervisor.State) {
	restarts := newSeries(c.restarts, prometheus.CounterValue)
	crashes := newSeries(c.crashes, prometheus.CounterValue)
	inFlight := newSeries(c.inFlight, prometheus.GaugeValue)
	queued := newSeries(c.queued, prometheus.GaugeValue)
	hardening := newSeries(c.hardening, prometheus.GaugeValue)
	byStatus := make(map[supervisor.Status]int, len(sidecarStatuses))
	for _, st := range states {
		skill, version := label(st.SkillID), label(st.Version)
		restarts.add(float64(st.Restarts), skill, version)
		crashes.add(float64(st.Crashes), skill, version)
		inFlight.add(float64(st.InFlight), skill, version)
		queued.add(float64(st.Queued), skill, version)
		if st.Hardening != nil {
			hardening.add(1, skill, version, st.Hardening.Level())
		}
		byStatus[st.Status]++
	}
	for _, s := range []*series{restarts, crashes, inFlight, queued, hardening} {
		s.emit(ch)
	}
	for _, status := range sidecarStatuses {
		ch <- prometheus.MustNewConstMetric(c.sidecars, prometheus.GaugeValue, float64(byStatus[status]), string(status))
	}
	ch <- prometheus.MustNewConstMetric(c.alive, prometheus.GaugeValue, float64(byStatus[supervisor.StatusRunning]))
}

// series gathers the samples of one metric by label values, adding up
// samples whose values were folded together (two unregistered codes of a
// skill, two ids cut to the same prefix), so that no series is emitted
// twice.
type series struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	order []string
	vals  map[string]float64
	lbls  map[string][]string
}

func newSeries(d *prometheus.Desc, t prometheus.ValueType) *series {
	return &series{desc: d, typ: t, vals: map[string]float64{}, lbls: map[string][]string{}}
}

func (s *series) add(v float64, labels ...string) {
	k := strings.Join(labels, "\xff")
	if _, ok := s.vals[k]; !ok {
		s.order = append(s.order, k)
		s.lbls[k] = labels
	}
	s.vals[k] += v
}

func (s *series) emit(ch chan<- prometheus.Metric) {
	for _, k := range s.order {
		m, err := prometheus.NewConstMetric(s.desc, s.typ, s.vals[k], s.lbls[k]...)
		if err != nil {
			m = prometheus.NewInvalidMetric(s.desc, err)
		}
		ch <- m
	}
}
