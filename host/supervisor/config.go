package supervisor

import (
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// Defaults of Config.
const (
	DefaultMaxConcurrentCalls = 4
	DefaultQueueDepth         = 16
	DefaultCallGrace          = 2 * time.Second
	DefaultIdleTimeout        = 5 * time.Minute
	DefaultRestartBackoff     = 100 * time.Millisecond
	DefaultMaxRestartBackoff  = 10 * time.Second
	DefaultCrashLoopThreshold = 5
	DefaultCrashLoopWindow    = time.Minute
	DefaultCallTimeout        = 30 * time.Second
	DefaultStartTimeout       = 15 * time.Second
	DefaultPreparedInstances  = 8
	DefaultSpareSidecars      = 1
	DefaultStandby            = 1
	DefaultStopTimeout        = 2 * time.Second
	DefaultHealthInterval     = 30 * time.Second
	DefaultHealthTimeout      = 5 * time.Second
	DefaultPrecompileTimeout  = 2 * time.Minute
	// DefaultPrecompileCPUTime is the CPU time one Precompile child may
	// use: a Go guest of sdk/examples (3.8 MB) compiles in about 5 s of
	// CPU, an 8 MiB one in about 12 s.
	DefaultPrecompileCPUTime = 30 * time.Second
	// DefaultPrecompileMemoryBytes caps the writable private memory of
	// one Precompile child (RLIMIT_DATA): 448 MiB, so that with the
	// sidecar binary's code (under 50 MB) and its main stack its peak RSS
	// stays under 512 MiB. A Go guest of sdk/examples needs about 230 MiB
	// of it (150 MB RSS).
	DefaultPrecompileMemoryBytes = 448 << 20
)

// Config configures a Supervisor. Zero values select the defaults.
type Config struct {
	// SidecarPath is the palyra-sidecar binary (an embedding app that calls
	// sidecar.Main may pass its own os.Executable()). Required.
	SidecarPath string
	// SidecarArgs are extra arguments of the serving sidecar command (not
	// of the precompile command).
	SidecarArgs []string
	// CacheDir is the precompiled-module cache given to sidecars and
	// filled by Precompile; empty disables the cache.
	CacheDir string
	// SocketDir is where each child's private directory (its sockets and
	// TMPDIR) is made; empty means os.TempDir(). Keep it short: Unix socket
	// paths are limited to 108 bytes. host.Open sets it to the host's own
	// runtime directory (host/rundir), which outlives no dead host.
	SocketDir string
	// Logger receives the supervisor's and the sidecars' logs (tagged with
	// skill_id and skill_version). Nil discards them.
	Logger hclog.Logger
	// Broker serves the capability calls of the guests. Nil makes every
	// capability call "unavailable".
	Broker sidecarplugin.Broker
	// MaxConcurrentCalls bounds the calls running in one sidecar (default 4).
	MaxConcurrentCalls int
	// QueueDepth bounds the calls waiting for one sidecar (default 16);
	// a call beyond it fails with ErrOverloaded.
	QueueDepth int
	// CallGrace is added to a call's effective timeout before the
	// supervisor kills a sidecar that did not answer (default 2 s).
	CallGrace time.Duration
	// DefaultTimeout is a call's wall-clock budget when neither the target
	// nor the context sets one (default 30 s).
	DefaultTimeout time.Duration
	// IdleTimeout stops a sidecar that had no call for that long (default
	// 5 min); a negative value never stops idle sidecars.
	IdleTimeout time.Duration
	// RestartBackoff and MaxRestartBackoff bound the exponential delay
	// before a crashed sidecar is restarted (defaults 100 ms and 10 s).
	// The first restart after a crash is immediate; RestartBackoff applies
	// from the second consecutive crash, doubling up to MaxRestartBackoff.
	RestartBackoff    time.Duration
	MaxRestartBackoff time.Duration
	// CrashLoopThreshold crashes within CrashLoopWindow mark a skill
	// version crashlooping (defaults 5 in 1 min).
	CrashLoopThreshold int
	CrashLoopWindow    time.Duration
	// StartTimeout bounds a sidecar's start and LoadSkill (default 15 s).
	StartTimeout time.Duration
	// PreparedInstances is the most instances each sidecar keeps ready
	// (default 8). A sidecar keeps one while calls come slowly and more as
	// they come faster or overlap, up to this, so that its preparer wakes
	// once per batch of calls (sidecar/internal/wasmrt, refillGap); it
	// falls back to one after 10 s without a call.
	PreparedInstances uint32
	// UnaryCalls sends each call as its own Invoke RPC instead of on the
	// sidecar's Calls stream (one long-lived gRPC stream carrying every
	// call). The outcomes are the same; the stream saves the HTTP/2
	// stream set-up of each call. It is there to measure that difference
	// (palyra-bench B) and as a way back should a stream misbehave.
	UnaryCalls bool
	// NoMemoryPool has sidecars give every instance a fresh linear memory
	// from wasmtime instead of the pool they keep for small modules
	// (sidecar/internal/wasmrt/mempool_linux.go); the precompile child is
	// told too, so that its cache entries match. It is there to measure
	// the difference (palyra-bench D).
	NoMemoryPool bool
	// SpareSidecars is how many sidecars, started and past their go-plugin
	// handshake but with no skill loaded, the supervisor keeps ready for
	// the next start of any skill version (default 1; negative: none). A
	// start that takes one pays only LoadSkill, which bounds recovery after
	// a crash. The pool is filled after the first successful start (a
	// supervisor that never runs a skill starts no spare) and refilled in
	// the background after each start, once its skill version is quiet
	// (or a second after the start);
	// each spare costs one idle process.
	SpareSidecars int
	// Standby keeps, for each running skill version in use, one more
	// sidecar with its module loaded, unused until the serving one dies:
	// the restart after a crash then promotes it (no process start, no
	// LoadSkill) and a new standby is made in the background. A version is
	// in use once it is called while its sidecar runs (its second call
	// after a start), started with Start, or after it crashed; a version
	// called once and then left to go idle gets none, so that many rarely
	// called skills do not run twice the sidecars. 1 (the default) turns
	// it on; a negative value off. Each costs one idle sidecar per skill
	// version in use (its prepared instances included); it is stopped with
	// the serving one (Stop, idleness, Close).
	Standby int
	// HealthInterval is how often the supervisor checks the health of
	// every running idle sidecar (default 30 s; negative: never). A
	// sidecar whose Health fails or does not answer within HealthTimeout
	// is killed, and that counts as a crash of its skill version.
	HealthInterval time.Duration
	// HealthTimeout bounds one health check (default 5 s, at most
	// HealthInterval).
	HealthTimeout time.Duration
	// PrecompileTimeout bounds one Precompile (default 2 min).
	PrecompileTimeout time.Duration
	// PrecompileCPUTime caps the CPU time of a Precompile child, in whole
	// seconds rounded up (default DefaultPrecompileCPUTime; negative: no
	// cap). Unlike PrecompileTimeout it does not depend on the machine's
	// load: it is what the module costs.
	PrecompileCPUTime time.Duration
	// PrecompileMemoryBytes caps the writable private memory of a
	// Precompile child (default DefaultPrecompileMemoryBytes; negative: no
	// cap). A module whose compile exceeds either cap fails with
	// ErrCompileBudgetExceeded.
	PrecompileMemoryBytes int64
	// Clock is the time source of crash accounting, restart backoff and
	// idleness (default: the real clock). Call deadlines, health checks
	// and the loops' periods run on real time: they race real processes.
	Clock Clock
	// Hardening configures the self-hardening every sidecar and precompile
	// child applies before it reads a module (on by default on Linux).
	Hardening HardeningConfig
	// RunAs, when set and the host runs as root, is the unprivileged user
	// and group sidecars and precompile children run as. That user must be
	// able to read the installed modules and to read and write CacheDir,
	// and to reach SocketDir (see RATIONALE.md, "Hardened sidecars").
	RunAs *Credential

	// sidecarTimeoutExtra is added to the timeout sent to the sidecar, so
	// tests can make a sidecar miss the supervisor's deadline.
	sidecarTimeoutExtra time.Duration
}

func (c *Config) setDefaults() {
	if c.MaxConcurrentCalls <= 0 {
		c.MaxConcurrentCalls = DefaultMaxConcurrentCalls
	}
	if c.QueueDepth < 0 {
		c.QueueDepth = 0
	} else if c.QueueDepth == 0 {
		c.QueueDepth = DefaultQueueDepth
	}
	if c.CallGrace <= 0 {
		c.CallGrace = DefaultCallGrace
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = DefaultCallTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.RestartBackoff <= 0 {
		c.RestartBackoff = DefaultRestartBackoff
	}
	if c.MaxRestartBackoff <= 0 {
		c.MaxRestartBackoff = DefaultMaxRestartBackoff
	}
	if c.MaxRestartBackoff < c.RestartBackoff {
		c.MaxRestartBackoff = c.RestartBackoff
	}
	if c.CrashLoopThreshold <= 0 {
		c.CrashLoopThreshold = DefaultCrashLoopThreshold
	}
	if c.CrashLoopWindow <= 0 {
		c.CrashLoopWindow = DefaultCrashLoopWindow
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	if c.PreparedInstances == 0 {
		c.PreparedInstances = DefaultPreparedInstances
	}
	if c.SpareSidecars == 0 {
		c.SpareSidecars = DefaultSpareSidecars
	}
	if c.Standby == 0 {
		c.Standby = DefaultStandby
	}
	if c.HealthInterval == 0 {
		c.HealthInterval = DefaultHealthInterval
	}
	if c.HealthTimeout <= 0 {
		c.HealthTimeout = DefaultHealthTimeout
	}
	if c.HealthInterval > 0 && c.HealthTimeout > c.HealthInterval {
		c.HealthTimeout = c.HealthInterval
	}
	if c.PrecompileTimeout <= 0 {
		c.PrecompileTimeout = DefaultPrecompileTimeout
	}
	if c.PrecompileCPUTime == 0 {
		c.PrecompileCPUTime = DefaultPrecompileCPUTime
	}
	if c.PrecompileMemoryBytes == 0 {
		c.PrecompileMemoryBytes = DefaultPrecompileMemoryBytes
	}
	if c.Clock == nil {
		c.Clock = RealClock()
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.SocketDir == "" {
		c.SocketDir = os.TempDir()
	}
}
