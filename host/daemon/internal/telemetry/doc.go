// Package telemetry is the Prometheus instrumentation of the palyra-host
// daemon: what the operator scrapes to see how skills behave, how the
// capability broker judges them and how their sidecars fare.
//
// A Metrics owns its own prometheus.Registry (never the global one), with
// the Go runtime and process collectors, and serves it with Handler. Every
// metric carries the constant label node (NodeLabel): the cluster node's
// name, or the machine's host name for a daemon that is not clustered. It is
// fed two ways, so that nothing is counted twice:
//
//   - At call time, by the daemon: ObserveCall after each tool call (count,
//     and histograms of duration from 100 µs to 30 s, fuel from 1e3 to
//     1e10 and peak memory from 64 KiB to 4 GiB), ObserveRequest for its
//     HTTP APIs, ObserveHook for hook dispatches, ObserveAnomalyQuarantine
//     when host/anomaly quarantines a skill, ObserveReaudit for re-audit
//     runs.
//   - At scrape time, from a Source: the counters the host, the broker and
//     the supervisor already keep (host.SkillStats, broker.Stats,
//     supervisor.State) are read when Prometheus scrapes and turned into
//     constant metrics by a custom collector. The package keeps no copy of
//     them.
//
// # Label cardinality
//
// Every label value is bounded:
//
//   - skill_id, version and tool_id are bounded by what is installed. A
//     scrape exports at most MaxSkills skill ids (the rest are counted in
//     palyra_metrics_skills_dropped) because a broker may see ids it was
//     never asked to run (a capability call for an unknown invocation).
//   - Error codes come from errcode, but a code can originate in a sidecar,
//     which is untrusted once guest code ran in it. A code is exported as it
//     is only when it is registered with errcode in this program or is one
//     of the codes the palyra-sidecar process defines (which the daemon does
//     not link); any other is folded into UnregisteredCode.
//   - Broker denial and failure reasons are the broker's own snake_case
//     constants, never message text; a reason that is not snake_case or is
//     longer than MaxCodeBytes is folded into UnregisteredCode all the same.
//   - The api, route, event and result arguments of the Observe methods are
//     the caller's: pass route patterns ("/v1/skills/{id}"), never raw paths,
//     and decisions or codes, never messages.
//
// Every value is made valid UTF-8 and cut to MaxLabelBytes, so no input can
// make an observation panic.
//
// All methods are safe for concurrent use, and the Observe methods are
// no-ops on a nil *Metrics, so a daemon running without metrics passes nil.
package telemetry
