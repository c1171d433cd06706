package supervisor

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/palyra-go/palyra/host/errcode"
	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// Sentinels of the supervisor. Failures the sidecar reports (fuel_exhausted,
// trap, tool_error, ...) come back as *sidecarplugin.Error, which matches
// any sentinel with the same code through errors.Is.
var (
	ErrOverloaded      = errcode.New("overloaded", "too many calls queued for this skill")
	ErrTimeout         = errcode.ErrTimeout
	ErrSidecarCrashed  = errcode.New("sidecar_crashed", "the skill's sidecar process died during the call")
	ErrCrashLooping    = errcode.New("crashlooping", "the skill's sidecar keeps crashing; calls are refused until it is reset")
	ErrClosed          = errcode.New("supervisor_closed", "the supervisor is closed")
	ErrSidecarStart    = errcode.New("sidecar_start_failed", "the skill's sidecar could not be started")
	ErrInvalidTarget   = errcode.New("invalid_target", "the call target is incomplete")
	ErrSidecarNotFound = errcode.New("sidecar_not_found", "the palyra-sidecar binary was not found")
	ErrCanceled        = errcode.ErrCanceled
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
	DefaultPreparedInstances  = 2
	DefaultStopTimeout        = 2 * time.Second
	DefaultHealthInterval     = 30 * time.Second
	DefaultHealthTimeout      = 5 * time.Second
)

// Config configures a Supervisor. Zero values select the defaults.
type Config struct {
	// SidecarPath is the palyra-sidecar binary (an embedding app that calls
	// sidecar.Main may pass its own os.Executable()). Required.
	SidecarPath string
	// SidecarArgs are extra arguments of the sidecar command.
	SidecarArgs []string
	// CacheDir is the precompiled-module cache given to sidecars; empty
	// disables the cache.
	CacheDir string
	// SocketDir is where each sidecar's private socket directory is made;
	// empty means os.TempDir(). Keep it short: Unix socket paths are limited
	// to 108 bytes.
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
	RestartBackoff    time.Duration
	MaxRestartBackoff time.Duration
	// CrashLoopThreshold crashes within CrashLoopWindow mark a skill
	// version crashlooping (defaults 5 in 1 min).
	CrashLoopThreshold int
	CrashLoopWindow    time.Duration
	// StartTimeout bounds a sidecar's start and LoadSkill (default 15 s).
	StartTimeout time.Duration
	// PreparedInstances is the number of instances each sidecar keeps
	// ready (default 2).
	PreparedInstances uint32
	// HealthInterval is how often the supervisor checks the health of
	// every running idle sidecar (default 30 s; negative: never). A
	// sidecar whose Health fails or does not answer within HealthTimeout
	// is killed, and that counts as a crash of its skill version.
	HealthInterval time.Duration
	// HealthTimeout bounds one health check (default 5 s, at most
	// HealthInterval).
	HealthTimeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time

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
	if c.HealthInterval == 0 {
		c.HealthInterval = DefaultHealthInterval
	}
	if c.HealthTimeout <= 0 {
		c.HealthTimeout = DefaultHealthTimeout
	}
	if c.HealthInterval > 0 && c.HealthTimeout > c.HealthInterval {
		c.HealthTimeout = c.HealthInterval
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.SocketDir == "" {
		c.SocketDir = os.TempDir()
	}
}

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

// Tool is one tool of a skill with its JSON Schemas (may be empty).
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

// loadKey identifies what a running sidecar was loaded with: a target
// whose key differs needs a fresh sidecar.
func (t *Target) loadKey() string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	_ = enc.Encode([]any{t.ModulePath, t.ModuleSHA256, t.Entrypoint, t.Limits, t.Tools})
	return hex.EncodeToString(h.Sum(nil))
}

// Stats are a call's resource use as the sidecar reported it.
type Stats struct {
	FuelConsumed     uint64        `json:"fuel_consumed"`
	InitFuelConsumed uint64        `json:"init_fuel_consumed,omitempty"`
	PeakMemoryBytes  uint64        `json:"peak_memory_bytes"`
	WallTime         time.Duration `json:"wall_time_ns"`
	CapabilityCalls  uint32        `json:"capability_calls"`
	Prepared         bool          `json:"prepared"`
}

// LogRecord is one log line of the guest.
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
	SkillID   string    `json:"skill_id"`
	Version   string    `json:"version"`
	Status    Status    `json:"status"`
	PID       int       `json:"pid,omitempty"`
	Restarts  int       `json:"restarts"`
	Crashes   int       `json:"crashes"`
	InFlight  int       `json:"in_flight"`
	Queued    int       `json:"queued"`
	LastError string    `json:"last_error,omitempty"`
	LastUsed  time.Time `json:"last_used,omitzero"`
	// CacheHit reports whether the last sidecar start loaded the module
	// from the precompiled cache (LoadSkill's cache_hit).
	CacheHit bool `json:"cache_hit"`
}

// Supervisor runs sidecars. It is safe for concurrent use.
type Supervisor struct {
	cfg Config
	log hclog.Logger

	mu       sync.Mutex
	closed   bool
	sidecars map[skey]*slot

	calls     sync.WaitGroup // every Call in progress
	wg        sync.WaitGroup // goroutines the supervisor owns
	stop      chan struct{}
	closeOnce sync.Once
}

type skey struct{ id, version string }

// slot is the state of one skill version. Its fields are guarded by
// Supervisor.mu.
type slot struct {
	key      skey
	proc     *proc
	starting chan struct{} // non-nil while a start is under way
	sem      chan struct{}
	queued   int
	inFlight int
	lastUsed time.Time

	starts      int
	crashes     []time.Time // within the window
	totalCrash  int
	consecutive int // crashes since the last good call
	nextStart   time.Time
	looping     bool
	lastErr     string
	cacheHit    bool // the last start's LoadSkill cache_hit
}

// proc is one sidecar process.
type proc struct {
	pc      *goplugin.Client
	client  *sidecarplugin.Client
	pid     int
	sockDir string
	loadKey string
	log     hclog.Logger
	// cacheHit is LoadSkill's cache_hit.
	cacheHit bool

	once    sync.Once // ends the process once
	dead    chan struct{}
	crashed bool // guarded by Supervisor.mu: ended by a crash
}

// New returns a Supervisor. It starts no sidecar until the first call.
func New(cfg Config) (*Supervisor, error) {
	if cfg.SidecarPath == "" {
		return nil, fmt.Errorf("%w: Config.SidecarPath is empty", ErrSidecarNotFound)
	}
	if fi, err := os.Stat(cfg.SidecarPath); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("%w: %s", ErrSidecarNotFound, cfg.SidecarPath)
	}
	cfg.setDefaults()
	s := &Supervisor{
		cfg:      cfg,
		log:      cfg.Logger.Named("supervisor"),
		sidecars: map[skey]*slot{},
		stop:     make(chan struct{}),
	}
	if cfg.IdleTimeout > 0 {
		s.wg.Add(1)
		go s.reaper()
	}
	if cfg.HealthInterval > 0 {
		s.wg.Add(1)
		go s.healthChecker()
	}
	return s, nil
}

// Start starts the sidecar of t (and loads its module) unless one runs
// already, without calling a tool: the eager start of a skill version.
// A failed start counts as a crash, as on a call.
func (s *Supervisor) Start(ctx context.Context, t Target) error {
	if t.SkillID == "" || t.ModuleSHA256 == "" || t.ModulePath == "" {
		return fmt.Errorf("%w: skill id, module path and module sha256 are required", ErrInvalidTarget)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.calls.Add(1)
	defer s.calls.Done()
	sl := s.slotLocked(skey{t.SkillID, t.Version})
	sl.lastUsed = s.cfg.Now()
	s.mu.Unlock()
	_, err := s.acquire(ctx, sl, &t)
	return err
}

// healthChecker checks the health of running idle sidecars every
// HealthInterval; one that fails or does not answer in time is killed and
// counted as a crash.
func (s *Supervisor) healthChecker() {
	defer s.wg.Done()
	tk := time.NewTicker(s.cfg.HealthInterval)
	defer tk.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tk.C:
		}
		type check struct {
			sl *slot
			p  *proc
		}
		var checks []check
		s.mu.Lock()
		for _, sl := range s.sidecars {
			if p := sl.proc; p != nil && p.client != nil && sl.inFlight == 0 && sl.queued == 0 {
				checks = append(checks, check{sl, p})
			}
		}
		s.mu.Unlock()
		for _, c := range checks {
			if err := s.checkHealth(c.p); err != nil {
				s.mu.Lock()
				closed := s.closed
				s.mu.Unlock()
				if closed {
					return
				}
				c.p.log.Warn("sidecar failed its health check; killing it", "pid", c.p.pid, "error", err)
				s.ended(c.sl, c.p, true, fmt.Errorf("health check failed: %v", err))
			}
		}
	}
}

// checkHealth asks p for its health, bounded by HealthTimeout.
func (s *Supervisor) checkHealth(p *proc) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.HealthTimeout)
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	resp, err := p.client.Health(ctx)
	if err != nil {
		return err
	}
	if st := resp.GetStatus(); st == sidecarv1.ServingStatus_SERVING_STATUS_NOT_LOADED || st == sidecarv1.ServingStatus_SERVING_STATUS_UNSPECIFIED {
		return fmt.Errorf("sidecar reports %s", st)
	}
	return nil
}

func (s *Supervisor) slotLocked(k skey) *slot {
	sl := s.sidecars[k]
	if sl == nil {
		sl = &slot{key: k, sem: make(chan struct{}, s.cfg.MaxConcurrentCalls)}
		s.sidecars[k] = sl
	}
	return sl
}

// Call runs tool toolID of the target with input (one JSON value). The
// effective wall-clock budget is the smallest of t.Limits.Timeout,
// ctx's deadline and Config.DefaultTimeout (when neither is set).
func (s *Supervisor) Call(ctx context.Context, t Target, toolID string, input []byte) (*Result, error) {
	return s.CallWith(ctx, t, toolID, input, CallOptions{})
}

// CallOptions are the optional parts of a call.
type CallOptions struct {
	// InvocationID is the call's id (the guest's invocation_id, and the id
	// of its capability calls at the broker); empty makes a random one. A
	// caller that registers the invocation with its broker before the call
	// sets it.
	InvocationID string
}

// CallWith is Call with options.
func (s *Supervisor) CallWith(ctx context.Context, t Target, toolID string, input []byte, opts CallOptions) (*Result, error) {
	if opts.InvocationID == "" {
		opts.InvocationID = NewInvocationID()
	}
	if t.SkillID == "" || t.ModuleSHA256 == "" || t.ModulePath == "" {
		return nil, fmt.Errorf("%w: skill id, module path and module sha256 are required", ErrInvalidTarget)
	}
	k := skey{t.SkillID, t.Version}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	s.calls.Add(1)
	defer s.calls.Done()
	sl := s.slotLocked(k)
	if sl.looping {
		last := sl.lastErr
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: skill %s version %s (last error: %s)", ErrCrashLooping, t.SkillID, t.Version, last)
	}
	// Admission: a free slot, else a place in the queue.
	select {
	case sl.sem <- struct{}{}:
	default:
		if sl.queued >= s.cfg.QueueDepth {
			s.mu.Unlock()
			return nil, fmt.Errorf("%w: skill %s version %s has %d calls running and %d queued", ErrOverloaded, t.SkillID, t.Version, s.cfg.MaxConcurrentCalls, sl.queued)
		}
		sl.queued++
		s.mu.Unlock()
		var err error
		select {
		case sl.sem <- struct{}{}:
		case <-ctx.Done():
			err = ctxError(ctx, fmt.Sprintf("waiting in the queue of skill %s version %s", t.SkillID, t.Version), nil)
		case <-s.stop:
			err = ErrClosed
		}
		s.mu.Lock()
		sl.queued--
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	sl.inFlight++
	sl.lastUsed = s.cfg.Now()
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		sl.inFlight--
		sl.lastUsed = s.cfg.Now()
		s.mu.Unlock()
		<-sl.sem
	}()

	// The call's budget.
	budget := t.Limits.Timeout
	if dl, ok := ctx.Deadline(); ok {
		if d := time.Until(dl); budget <= 0 || d < budget {
			budget = d
		}
	}
	if budget <= 0 {
		if _, ok := ctx.Deadline(); ok {
			return nil, fmt.Errorf("%w: no time left for skill %s version %s: %w", ErrTimeout, t.SkillID, t.Version, context.DeadlineExceeded)
		}
		budget = s.cfg.DefaultTimeout
	}
	for attempt := 0; ; attempt++ {
		p, err := s.acquire(ctx, sl, &t)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctxError(ctx, fmt.Sprintf("starting the sidecar of skill %s version %s", t.SkillID, t.Version), err)
			}
			return nil, err
		}
		res, err := s.invoke(ctx, sl, p, &t, toolID, input, budget, opts.InvocationID)
		// A sidecar being stopped (idle, retired, Close) refuses new
		// calls before running them: run the call in a fresh one, once.
		if err != nil && errcode.Of(err) == codeSidecarStopping {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil, fmt.Errorf("%w: call of skill %s version %s refused by a stopping sidecar", ErrClosed, t.SkillID, t.Version)
			}
			if attempt == 0 {
				continue
			}
		}
		return res, err
	}
}

// codeSidecarStopping is the sidecar's refusal of a call that arrives after
// Stop: the call did not run.
const codeSidecarStopping = "sidecar_stopping"

func (s *Supervisor) invoke(ctx context.Context, sl *slot, p *proc, t *Target, toolID string, input []byte, budget time.Duration, id string) (*Result, error) {
	req := &sidecarv1.InvokeRequest{
		InvocationId: id,
		SkillId:      t.SkillID,
		ToolId:       toolID,
		Input:        input,
		Grants:       grantsProto(t.Grants),
		Timeout:      durationpb.New(budget + s.cfg.sidecarTimeoutExtra),
		Limits:       limitsProto(t.Limits, s.cfg.sidecarTimeoutExtra),
	}
	// The sidecar enforces the budget itself (req.Timeout); the supervisor
	// watches budget + grace with a timer of its own. That deadline is not
	// sent over gRPC (it would end the sidecar's call at the very moment the
	// supervisor decides, making "answered late" and "never answered" a
	// race): the RPC is cancelled by the timer or by the caller's ctx.
	rpcCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var expired atomic.Bool
	timer := time.AfterFunc(budget+s.cfg.CallGrace, func() {
		expired.Store(true)
		cancel()
	})
	defer timer.Stop()
	stopCtx := context.AfterFunc(ctx, cancel)
	defer stopCtx()
	resp, err := p.client.Invoke(rpcCtx, req)
	res := resultOf(req.InvocationId, resp)
	if res != nil {
		res.SkillID, res.Version = t.SkillID, t.Version
	}
	if res != nil {
		res.PID = p.pid
	}
	if err == nil {
		s.mu.Lock()
		sl.consecutive = 0
		s.mu.Unlock()
		return res, nil
	}
	var se *sidecarplugin.Error
	if errors.As(err, &se) {
		// An outcome the sidecar reported: the sidecar is fine.
		s.mu.Lock()
		sl.consecutive = 0
		s.mu.Unlock()
		return res, err
	}
	// A transport failure.
	if ctx.Err() != nil {
		// The caller gave up. The sidecar cancels the guest itself.
		if p.pc.Exited() {
			s.ended(sl, p, true, err)
		}
		return nil, ctxError(ctx, fmt.Sprintf("call of skill %s version %s", t.SkillID, t.Version), err)
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("%w: call of skill %s version %s ended by Close", ErrClosed, t.SkillID, t.Version)
	}
	if expired.Load() || status.Code(err) == codes.DeadlineExceeded {
		// The sidecar did not answer in time + grace: kill it.
		s.log.Warn("sidecar missed its deadline; killing it", "skill_id", t.SkillID, "skill_version", t.Version, "pid", p.pid, "budget", budget)
		s.ended(sl, p, false, fmt.Errorf("killed: no answer within %v + grace", budget))
		return nil, fmt.Errorf("%w: skill %s version %s did not answer within %v (+%v grace); its sidecar (pid %d) was killed", ErrTimeout, t.SkillID, t.Version, budget, s.cfg.CallGrace, p.pid)
	}
	s.ended(sl, p, true, err)
	return nil, fmt.Errorf("%w: skill %s version %s, pid %d: %v", ErrSidecarCrashed, t.SkillID, t.Version, p.pid, err)
}

// acquire returns the running sidecar of sl, starting one if needed.
func (s *Supervisor) acquire(ctx context.Context, sl *slot, t *Target) (*proc, error) {
	lk := t.loadKey()
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		if sl.looping {
			last := sl.lastErr
			s.mu.Unlock()
			return nil, fmt.Errorf("%w: skill %s version %s (last error: %s)", ErrCrashLooping, t.SkillID, t.Version, last)
		}
		if p := sl.proc; p != nil {
			if p.pc.Exited() {
				s.mu.Unlock()
				s.ended(sl, p, true, errors.New("sidecar exited"))
				continue
			}
			if p.loadKey == lk {
				s.mu.Unlock()
				return p, nil
			}
			// The installed module or its load settings changed: retire
			// the old sidecar (graceful Stop waits for its calls).
			sl.proc = nil
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.endProc(p, true)
			}()
		}
		if ch := sl.starting; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		sl.starting = ch
		wait := sl.nextStart.Sub(s.cfg.Now())
		s.mu.Unlock()

		p, err := s.startAfter(ctx, wait, t, lk)

		s.mu.Lock()
		sl.starting = nil
		close(ch)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, ErrClosed) {
				s.crashLocked(sl, err)
			}
			s.mu.Unlock()
			return nil, err
		}
		if s.closed {
			s.mu.Unlock()
			s.endProc(p, false)
			return nil, ErrClosed
		}
		sl.proc = p
		sl.starts++
		sl.cacheHit = p.cacheHit
		s.mu.Unlock()
		return p, nil
	}
}

func (s *Supervisor) startAfter(ctx context.Context, wait time.Duration, t *Target, lk string) (*proc, error) {
	if wait > 0 {
		tm := time.NewTimer(wait)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
			return nil, ctx.Err()
		case <-s.stop:
			tm.Stop()
			return nil, ErrClosed
		}
	}
	return s.start(ctx, t, lk)
}

// start starts a sidecar and loads t's module in it.
func (s *Supervisor) start(ctx context.Context, t *Target, lk string) (*proc, error) {
	log := s.cfg.Logger.Named("sidecar").With("skill_id", t.SkillID, "skill_version", t.Version)
	sockDir, err := os.MkdirTemp(s.cfg.SocketDir, "sc-")
	if err != nil {
		return nil, fmt.Errorf("%w: socket dir: %v", ErrSidecarStart, err)
	}
	if err := os.Chmod(sockDir, 0o700); err != nil {
		os.RemoveAll(sockDir)
		return nil, fmt.Errorf("%w: socket dir: %v", ErrSidecarStart, err)
	}
	cmd := exec.Command(s.cfg.SidecarPath, s.cfg.SidecarArgs...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	// go-plugin makes a directory for the sockets of this sidecar inside
	// sockDir, for both ends: the sidecar's (PLUGIN_UNIX_SOCKET_DIR) and
	// the supervisor's own GRPCBroker listener that serves the capability
	// broker. UnixSocketConfig takes effect only with a RunnerFunc (and no
	// Cmd): go-plugin then hands the runner a spec whose Env is ours plus
	// the plugin variables. Nothing lands in $TMPDIR, and removing sockDir
	// removes it all.
	runnerFunc := func(l hclog.Logger, spec *exec.Cmd, _ string) (runner.Runner, error) {
		cmd.Env = append(sidecarEnv(os.Environ()), spec.Env...)
		return newCmdRunner(l, cmd)
	}
	pc := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sidecarplugin.Handshake,
		Plugins:          sidecarplugin.ClientPlugins(bindBroker(s.cfg.Broker, t.SkillID)),
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		UnixSocketConfig: &goplugin.UnixSocketConfig{TempDir: sockDir},
		RunnerFunc:       runnerFunc,
		StartTimeout:     s.cfg.StartTimeout,
		Logger:           log,
		SyncStdout:       io.Discard,
		SyncStderr:       io.Discard,
	})
	p := &proc{pc: pc, sockDir: sockDir, loadKey: lk, log: log, dead: make(chan struct{})}
	fail := func(err error) (*proc, error) {
		s.endProc(p, false)
		return nil, err
	}
	// Pdeathsig fires when the OS thread that forked the child exits. A
	// fresh goroutine never runs on a thread locked by another goroutine
	// (the only threads Go ends), so the fork happens on one that lives
	// as long as the process.
	type started struct {
		rpc goplugin.ClientProtocol
		err error
	}
	ch := make(chan started, 1)
	go func() {
		rpc, err := pc.Client()
		ch <- started{rpc, err}
	}()
	st := <-ch
	rpc, err := st.rpc, st.err
	if cmd.Process != nil {
		p.pid = cmd.Process.Pid
	}
	if err != nil {
		return fail(fmt.Errorf("%w: %s: %v", ErrSidecarStart, s.cfg.SidecarPath, err))
	}
	raw, err := rpc.Dispense(sidecarplugin.PluginName)
	if err != nil {
		return fail(fmt.Errorf("%w: dispense: %v", ErrSidecarStart, err))
	}
	cl, ok := raw.(*sidecarplugin.Client)
	if !ok {
		return fail(fmt.Errorf("%w: dispensed %T", ErrSidecarStart, raw))
	}
	p.client = cl
	lctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	tools := make([]*sidecarv1.Tool, 0, len(t.Tools))
	for _, tl := range t.Tools {
		tools = append(tools, &sidecarv1.Tool{Id: tl.ID, InputSchema: tl.InputSchema, OutputSchema: tl.OutputSchema})
	}
	lr, err := cl.LoadSkill(lctx, &sidecarv1.LoadSkillRequest{
		SkillId:           t.SkillID,
		SkillVersion:      t.Version,
		Module:            &sidecarv1.LoadSkillRequest_ModulePath{ModulePath: t.ModulePath},
		ModuleSha256:      t.ModuleSHA256,
		CacheDir:          s.cfg.CacheDir,
		Entrypoint:        t.Entrypoint,
		Limits:            limitsProto(t.Limits, s.cfg.sidecarTimeoutExtra),
		PreparedInstances: s.cfg.PreparedInstances,
		Grants:            grantsProto(t.Grants),
		Tools:             tools,
	})
	if err != nil {
		return fail(fmt.Errorf("loading skill %s version %s: %w", t.SkillID, t.Version, err))
	}
	p.cacheHit = lr.GetCacheHit()
	log.Debug("sidecar started", "pid", p.pid, "cache_hit", p.cacheHit)
	return p, nil
}

// ended records that p is over (crash: it died by itself) and ends it.
// Only the first report counts.
func (s *Supervisor) ended(sl *slot, p *proc, crash bool, cause error) {
	s.mu.Lock()
	first := sl.proc == p
	if first {
		sl.proc = nil
		p.crashed = crash
		if crash {
			s.crashLocked(sl, cause)
		} else if cause != nil {
			sl.lastErr = cause.Error()
		}
	}
	s.mu.Unlock()
	s.endProc(p, false)
}

// crashLocked counts a crash (or a failed start) of sl.
func (s *Supervisor) crashLocked(sl *slot, cause error) {
	now := s.cfg.Now()
	sl.totalCrash++
	sl.consecutive++
	if cause != nil {
		sl.lastErr = cause.Error()
	}
	keep := sl.crashes[:0]
	for _, c := range sl.crashes {
		if now.Sub(c) < s.cfg.CrashLoopWindow {
			keep = append(keep, c)
		}
	}
	sl.crashes = append(keep, now)
	backoff := s.cfg.RestartBackoff
	for i := 1; i < sl.consecutive && backoff < s.cfg.MaxRestartBackoff; i++ {
		backoff *= 2
	}
	if backoff > s.cfg.MaxRestartBackoff {
		backoff = s.cfg.MaxRestartBackoff
	}
	sl.nextStart = now.Add(backoff)
	if len(sl.crashes) >= s.cfg.CrashLoopThreshold {
		if !sl.looping {
			s.log.Error("skill is crashlooping", "skill_id", sl.key.id, "skill_version", sl.key.version, "crashes", len(sl.crashes), "window", s.cfg.CrashLoopWindow, "last_error", sl.lastErr)
		}
		sl.looping = true
	} else {
		s.log.Warn("sidecar crashed", "skill_id", sl.key.id, "skill_version", sl.key.version, "error", sl.lastErr, "restart_in", backoff)
	}
}

// endProc ends a sidecar process: graceful asks it to Stop first (which
// waits for its in-flight calls, bounded by DefaultStopTimeout); otherwise
// its process group is SIGKILLed. It returns once the process is reaped and
// its socket dir removed. It is idempotent: later calls wait for the first.
func (s *Supervisor) endProc(p *proc, graceful bool) {
	p.once.Do(func() {
		defer close(p.dead)
		if graceful && p.client != nil && !p.pc.Exited() {
			ctx, cancel := context.WithTimeout(context.Background(), DefaultStopTimeout)
			_ = p.client.Stop(ctx)
			cancel()
		} else if p.pid > 0 && !p.pc.Exited() {
			// The process is not reaped yet (go-plugin reaps it), so its
			// pid and process group are still ours.
			_ = syscall.Kill(-p.pid, syscall.SIGKILL)
		}
		p.pc.Kill()
		if p.sockDir != "" {
			_ = os.RemoveAll(p.sockDir)
		}
	})
	<-p.dead
}

// reaper stops idle sidecars.
func (s *Supervisor) reaper() {
	defer s.wg.Done()
	every := s.cfg.IdleTimeout / 4
	if every < 10*time.Millisecond {
		every = 10 * time.Millisecond
	}
	if every > 30*time.Second {
		every = 30 * time.Second
	}
	tk := time.NewTicker(every)
	defer tk.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tk.C:
		}
		now := s.cfg.Now()
		var idle []*proc
		s.mu.Lock()
		for _, sl := range s.sidecars {
			if p := sl.proc; p != nil && sl.inFlight == 0 && sl.queued == 0 && now.Sub(sl.lastUsed) >= s.cfg.IdleTimeout {
				sl.proc = nil
				idle = append(idle, p)
			}
		}
		s.mu.Unlock()
		for _, p := range idle {
			p.log.Debug("stopping idle sidecar", "pid", p.pid)
			s.endProc(p, true)
		}
	}
}

// State reports the sidecar state of a skill version.
func (s *Supervisor) State(skillID, version string) State {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl := s.sidecars[skey{skillID, version}]
	if sl == nil {
		return State{SkillID: skillID, Version: version, Status: StatusStopped}
	}
	return s.stateLocked(sl)
}

// States reports every skill version the supervisor has seen, sorted.
func (s *Supervisor) States() []State {
	s.mu.Lock()
	out := make([]State, 0, len(s.sidecars))
	for _, sl := range s.sidecars {
		out = append(out, s.stateLocked(sl))
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].SkillID != out[j].SkillID {
			return out[i].SkillID < out[j].SkillID
		}
		return out[i].Version < out[j].Version
	})
	return out
}

func (s *Supervisor) stateLocked(sl *slot) State {
	st := State{
		SkillID: sl.key.id, Version: sl.key.version, Status: StatusStopped,
		Crashes: sl.totalCrash, InFlight: sl.inFlight, Queued: sl.queued,
		LastError: sl.lastErr, LastUsed: sl.lastUsed, CacheHit: sl.cacheHit,
	}
	if sl.starts > 1 {
		st.Restarts = sl.starts - 1
	}
	switch {
	case sl.looping:
		st.Status = StatusCrashLooping
	case sl.proc != nil:
		st.Status = StatusRunning
		st.PID = sl.proc.pid
	case sl.starting != nil:
		st.Status = StatusStarting
	}
	return st
}

// Reset clears the crash history of a skill (of every version when version
// is ""), so a crashlooping skill may run again.
func (s *Supervisor) Reset(skillID, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, sl := range s.sidecars {
		if k.id == skillID && (version == "" || k.version == version) {
			sl.looping = false
			sl.crashes = nil
			sl.consecutive = 0
			sl.nextStart = time.Time{}
			sl.lastErr = ""
		}
	}
}

// Stop stops the sidecar of a skill version if it runs (graceful: its
// in-flight calls finish first). The next call starts a new one.
func (s *Supervisor) Stop(skillID, version string) {
	s.mu.Lock()
	var p *proc
	if sl := s.sidecars[skey{skillID, version}]; sl != nil {
		p, sl.proc = sl.proc, nil
	}
	s.mu.Unlock()
	if p != nil {
		s.endProc(p, true)
	}
}

// Close stops every sidecar (graceful Stop bounded by ctx, then Kill),
// removes their socket dirs and waits for the calls in progress and every
// goroutine of the supervisor. ctx bounds only the graceful part: once it
// is done, the remaining sidecars are SIGKILLed. Close returns nil once
// everything is gone. It is idempotent; later calls wait for the first.
func (s *Supervisor) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.stop)
		var procs []*proc
		for _, sl := range s.sidecars {
			if sl.proc != nil {
				procs = append(procs, sl.proc)
				sl.proc = nil
			}
		}
		s.mu.Unlock()
		var wg sync.WaitGroup
		for _, p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				graceful := ctx.Err() == nil
				if graceful && p.client != nil && !p.pc.Exited() {
					sctx, cancel := context.WithTimeout(ctx, DefaultStopTimeout)
					_ = p.client.Stop(sctx)
					cancel()
				}
				s.endProc(p, false)
			}()
		}
		wg.Wait()
		s.calls.Wait()
		s.wg.Wait()
	})
	s.calls.Wait()
	s.wg.Wait()
	return nil
}

// ctxError reports a call that ctx ended: timeout for a deadline,
// canceled otherwise. It wraps ctx.Err() too.
func ctxError(ctx context.Context, what string, cause error) error {
	code := ErrCanceled
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		code = ErrTimeout
	}
	if cause == nil || errors.Is(cause, ctx.Err()) {
		return fmt.Errorf("%w: %s: %w", code, what, ctx.Err())
	}
	return fmt.Errorf("%w: %s: %w (%v)", code, what, ctx.Err(), cause)
}

func resultOf(id string, r *sidecarv1.InvokeResponse) *Result {
	if r == nil {
		return nil
	}
	res := &Result{
		InvocationID: id,
		Output:       json.RawMessage(r.GetOutput()),
		ExitCode:     r.GetExitCode(),
		LogsDropped:  r.GetLogsDropped(),
		TrapCode:     r.GetTrapCode(),
	}
	if len(res.Output) == 0 {
		res.Output = nil
	}
	if st := r.GetStats(); st != nil {
		res.Stats = Stats{
			FuelConsumed:     st.GetFuelConsumed(),
			InitFuelConsumed: st.GetInitFuelConsumed(),
			PeakMemoryBytes:  st.GetPeakMemoryBytes(),
			WallTime:         st.GetWallTime().AsDuration(),
			CapabilityCalls:  st.GetCapabilityCalls(),
			Prepared:         st.GetPrepared(),
		}
	}
	for _, l := range r.GetLogs() {
		res.Logs = append(res.Logs, LogRecord{Level: l.GetLevel().String(), Message: l.GetMessage()})
	}
	if te := r.GetToolError(); te != nil {
		res.ToolError = &ToolError{Code: te.GetCode(), Message: te.GetMessage()}
	}
	return res
}

func limitsProto(l Limits, extra time.Duration) *sidecarv1.Limits {
	out := &sidecarv1.Limits{
		Fuel:               l.Fuel,
		MemoryBytes:        l.MemoryBytes,
		TableElements:      l.TableElements,
		Instances:          l.Instances,
		Tables:             l.Tables,
		Memories:           l.Memories,
		MaxCapabilityCalls: l.MaxCapabilityCalls,
	}
	if l.Timeout > 0 {
		out.Timeout = durationpb.New(l.Timeout + extra)
	}
	return out
}

func grantsProto(g Grants) *sidecarv1.Grants {
	return &sidecarv1.Grants{
		HttpHosts:       g.HTTPHosts,
		SecretKeys:      g.SecretKeys,
		StoragePrefixes: g.StoragePrefixes,
		Channels:        g.Channels,
	}
}

// NewInvocationID returns a random invocation id (32 hex digits), the kind
// CallWith makes when CallOptions.InvocationID is empty. A caller that
// registers an invocation elsewhere (its capability broker) before the call
// makes the id with it.
func NewInvocationID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// boundBroker is the broker as one sidecar sees it: the sidecar serves one
// skill, so a capability call naming another skill is refused before the
// broker sees it (a compromised sidecar cannot act for a neighbour, even
// with a stolen invocation id).
type boundBroker struct {
	skillID string
	b       sidecarplugin.Broker
}

func bindBroker(b sidecarplugin.Broker, skillID string) sidecarplugin.Broker {
	if b == nil {
		return nil
	}
	return &boundBroker{skillID: skillID, b: b}
}

// Call implements sidecarplugin.Broker.
func (bb *boundBroker) Call(ctx context.Context, req sidecarplugin.CapabilityRequest) ([]byte, error) {
	if req.SkillID != bb.skillID {
		return nil, &sidecarplugin.CapabilityError{Code: sidecarplugin.CodeDenied,
			Message: fmt.Sprintf("this sidecar serves skill %s; it may not act for %q", bb.skillID, req.SkillID)}
	}
	return bb.b.Call(ctx, req)
}

// sidecarEnv is the environment a sidecar inherits: only what a Go process
// and the sidecar itself read (runtime tuning, locale, temp dir,
// PALYRA_SIDECAR_*), never the rest of the host's environment, which may
// hold secrets (PALYRA_VAULT_KEY, cloud credentials, tokens).
func sidecarEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ",
			"GOMAXPROCS", "GOGC", "GOMEMLIMIT", "GODEBUG", "GOTRACEBACK":
			out = append(out, kv)
		default:
			if strings.HasPrefix(k, "PALYRA_SIDECAR_") {
				out = append(out, kv)
			}
		}
	}
	return out
}
