// Package anomaly decides when a skill version's runtime behaviour is bad
// enough to quarantine it: the runtime anomaly quarantine of Palyra-Go,
// which none of the peer projects has (a skill is otherwise quarantined
// only by the install-time and re-audit checks, or by an operator).
//
// The host reports every failed call to a Detector with the call's error
// code (errcode.Of). Codes that signal an anomaly map to a Kind (KindOf):
// fuel_exhausted, trap, timeout, memory_limit, capability_denied,
// sidecar_crashed, invalid_output; every other code (a tool error, invalid
// input, an overloaded supervisor, ...) is the caller's or an ordinary
// outcome and is ignored. For each skill version and kind the Detector keeps
// the times of the anomalies inside the Policy's sliding Window, and when
// their number reaches the kind's threshold, Observe returns a Trip: the
// evidence the host writes as the quarantine reason (Trip.Reason). The
// counter of that kind then starts again from zero, so the version trips
// again only after as many new anomalies.
//
// What to feed it: only calls that the skill itself made fail. A call that
// ended because the caller's own context ended (ctx.Err() != nil once the
// call returns: the caller's deadline is reported as timeout too) is not the
// skill's anomaly, and counting it would let any caller get a healthy skill
// quarantined with short deadlines.
//
// The Detector is pure logic: no goroutines, no I/O, time given by the
// caller, safe for concurrent use. Its memory is bounded: at most MaxTracked
// skill versions (the least recently observed one is forgotten first) and,
// per version and kind, at most the kind's threshold in timestamps.
//
// A Policy is decoded from the daemon's TOML configuration:
//
//	[anomaly]
//	window = "5m"
//	thresholds = { fuel_exhausted = 5, trap = 5, timeout = 5, capability_denied = 10 }
//
// and checked with Validate. A kind that is not listed, or is listed with 0,
// is off; DefaultPolicy gives the recommended thresholds.
package anomaly
