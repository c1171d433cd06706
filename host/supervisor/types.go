package supervisor

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"time"
)

// Limits are a skill's effective limits (manifest quotas ∩ operator
// policy); zero fields are unlimited or the sidecar's default.
type Limits struct {
	Fuel               uint64
	MemoryBytes        int64
	TableElements      int64
	Instances          int64
	Tables             int64
	Memories           int64
	Timeout            time.Duration
	MaxCapabilityCalls uint32
}

// Grants are the capabilities a call may use (manifest ∩ policy).
type Grants struct {
	HTTPHosts       []string
	SecretKeys      []string
	StoragePrefixes []string
	Channels        []string
}

// equal reports whether g and o grant the same, in the same order.
func (g *Grants) equal(o *Grants) bool {
	return slices.Equal(g.HTTPHosts, o.HTTPHosts) && slices.Equal(g.SecretKeys, o.SecretKeys) &&
		slices.Equal(g.StoragePrefixes, o.StoragePrefixes) && slices.Equal(g.Channels, o.Channels)
}

// Tool is one tool of a skill with its JSON Schemas (may be empty). The
// supervisor checks a call's input against InputSchema before the call
// and its output against OutputSchema after (schemas.go); the sidecar is
// sent the tool id only.
type Tool struct {
	ID           string
	InputSchema  []byte
	OutputSchema []byte
}

// Target is the installed skill version a call runs, as the caller
// resolved it.
type Target struct {
	SkillID      string
	Version      string
	ModulePath   string
	ModuleSHA256 string
	// Entrypoint overrides the module's entrypoint; empty selects
	// palyra_plugin_main, else run.
	Entrypoint string
	Limits     Limits
	Grants     Grants
	Tools      []Tool
}

// valid reports whether t names what a sidecar needs to load it.
func (t *Target) valid() bool {
	return t.SkillID != "" && t.ModuleSHA256 != "" && t.ModulePath != ""
}

// loadKey identifies what a running sidecar was loaded with: a target
// whose key differs needs a fresh sidecar.
func (t *Target) loadKey() string {
	// Each field length-prefixed, so no two targets write the same bytes;
	// computed on every call, so without reflection.
	h := sha256.New()
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	num := func(v uint64) { b = binary.AppendUvarint(b, v) }
	str(t.ModulePath)
	str(t.ModuleSHA256)
	str(t.Entrypoint)
	l := &t.Limits
	for _, v := range []uint64{l.Fuel, uint64(l.MemoryBytes), uint64(l.TableElements), uint64(l.Instances),
		uint64(l.Tables), uint64(l.Memories), uint64(l.Timeout), uint64(l.MaxCapabilityCalls), uint64(len(t.Tools))} {
		num(v)
	}
	for _, tl := range t.Tools {
		str(tl.ID)
		str(string(tl.InputSchema))
		str(string(tl.OutputSchema))
	}
	h.Write(b)
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// CallOptions are the optional parts of a call; the zero value is a plain
// call.
type CallOptions struct {
	// InvocationID is the call's id (the guest's invocation_id, and the id
	// of its capability calls at the broker); empty makes a random one. A
	// caller that registers the invocation with its broker before the call
	// sets it.
	InvocationID string
	// Config is the skill's operator config for this call (one JSON
	// object, manifest [config]); nil gives the guest {}. It may hold
	// sensitive values: it is sent with this call only and never logged.
	Config []byte
}

// Stats are a call's resource use as the sidecar reported it.
type Stats struct {
	FuelConsumed     uint64        `json:"fuel_consumed"`
	InitFuelConsumed uint64        `json:"init_fuel_consumed,omitempty"`
	PeakMemoryBytes  uint64        `json:"peak_memory_bytes"`
	WallTime         time.Duration `json:"wall_time_ns"`
	CapabilityCalls  uint32        `json:"capability_calls"`
	Prepared         bool          `json:"prepared"`
	// FuelLowerBound is set when the call ended on a timeout:
	// FuelConsumed is then a lower bound (wasmtime does not save its fuel
	// counter when an epoch deadline interrupts the guest).
	FuelLowerBound bool `json:"fuel_consumed_lower_bound,omitempty"`
}

// LogRecord is one log line of the guest. Level is trace, debug, info,
// warn or error (LogLevelName; decoding also takes the LOG_LEVEL_* names
// earlier versions wrote).
type LogRecord struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// ToolError is the error a tool reported (guest text: quote it).
type ToolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Result is the outcome of a call. On a failure the sidecar reported, Call
// returns the Result (stats, logs, tool error) together with the error.
type Result struct {
	InvocationID string `json:"invocation_id"`
	// SkillID and Version name the skill version that ran.
	SkillID     string          `json:"skill_id,omitempty"`
	Version     string          `json:"version,omitempty"`
	Output      json.RawMessage `json:"output,omitempty"`
	ExitCode    int32           `json:"exit_code"`
	Stats       Stats           `json:"stats"`
	Logs        []LogRecord     `json:"logs,omitempty"`
	LogsDropped uint32          `json:"logs_dropped,omitempty"`
	ToolError   *ToolError      `json:"tool_error,omitempty"`
	TrapCode    string          `json:"trap_code,omitempty"`
	PID         int             `json:"-"`
}

// Status is the lifecycle state of a skill version's sidecar.
type Status string

// Statuses.
const (
	StatusStopped      Status = "stopped"
	StatusStarting     Status = "starting"
	StatusRunning      Status = "running"
	StatusCrashLooping Status = "crashlooping"
)

// State describes a skill version's sidecar, for inventory and the CLI.
type State struct {
	SkillID string `json:"skill_id"`
	Version string `json:"version"`
	Status  Status `json:"status"`
	PID     int    `json:"pid,omitempty"`
	// StandbyPID is the pid of the standby sidecar (Config.Standby) once it
	// is loaded and ready to take over; 0 while there is none.
	StandbyPID int       `json:"standby_pid,omitempty"`
	Restarts   int       `json:"restarts"`
	Crashes    int       `json:"crashes"`
	InFlight   int       `json:"in_flight"`
	Queued     int       `json:"queued"`
	LastError  string    `json:"last_error,omitempty"`
	LastUsed   time.Time `json:"last_used,omitzero"`
	// CacheHit reports whether the last sidecar start loaded the module
	// from the precompiled cache (LoadSkill's cache_hit).
	CacheHit bool `json:"cache_hit"`
	// Hardening is how the running (or last) sidecar hardened itself, as
	// it reported in LoadSkill; nil before a sidecar answered.
	Hardening *Hardening `json:"hardening,omitempty"`
}
