package supervisor

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/palyra-go/palyra/host/internal/launch"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// Supervisor runs sidecars. It is safe for concurrent use. It owns every
// process it starts; Close ends them all.
type Supervisor struct {
	cfg Config
	log hclog.Logger
	// schemas are the compiled schemas of the targets' tools (schemas.go).
	schemas schemaCache

	mu       sync.Mutex
	closed   bool
	sidecars map[skey]*slot
	spares   []*proc       // started sidecars with no skill yet (spare.go)
	refill   chan struct{} // wakes the spare filler

	calls     sync.WaitGroup // every Call, Start and Precompile in progress
	wg        sync.WaitGroup // goroutines the supervisor owns
	stop      chan struct{}  // closed by Close
	closeOnce sync.Once
}

type skey struct{ id, version string }

// slot is the state of one skill version. Its fields are guarded by
// Supervisor.mu.
type slot struct {
	key     skey
	proc    *proc
	standby *proc // loaded like proc, promoted when it dies (standby.go)
	// standbyStarting is set while a standby is being made.
	standbyStarting bool
	// inUse marks a skill version worth a standby (standby.go): called
	// again while its sidecar ran, started eagerly, or crashed. Idleness
	// and Stop clear it with the sidecars.
	inUse    bool
	starting chan struct{} // non-nil while a start is under way
	sem      chan struct{} // one token per running call
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
	cacheHit    bool       // the last start's LoadSkill cache_hit
	hardening   *Hardening // the last start's LoadSkill hardening
}

// proc is one sidecar process.
type proc struct {
	pc      *goplugin.Client
	child   *launch.Child
	runner  *cmdRunner
	client  *sidecarplugin.Client
	broker  *boundBroker // nil without Config.Broker
	pid     int
	loadKey string
	// grants are the grants LoadSkill gave the sidecar: the default of
	// every call (a call whose target has others sends them).
	grants Grants
	log    hclog.Logger
	// cacheHit is LoadSkill's cache_hit.
	cacheHit bool
	// hardening is LoadSkill's hardening report.
	hardening *Hardening

	once sync.Once // ends the process once
	dead chan struct{}
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
		refill:   make(chan struct{}, 1),
	}
	if cfg.IdleTimeout > 0 {
		s.wg.Add(1)
		go s.reaper()
	}
	if cfg.HealthInterval > 0 {
		s.wg.Add(1)
		go s.healthChecker()
	}
	if cfg.SpareSidecars > 0 {
		s.wg.Add(1)
		go s.spareFiller()
	}
	return s, nil
}

// enter registers an operation (Call, Start, Precompile) that Close waits
// for; it fails once the supervisor is closed. The caller must call
// s.calls.Done when the operation ends.
func (s *Supervisor) enter() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.calls.Add(1)
	return nil
}

func (s *Supervisor) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Supervisor) slotLocked(k skey) *slot {
	sl := s.sidecars[k]
	if sl == nil {
		sl = &slot{key: k, sem: make(chan struct{}, s.cfg.MaxConcurrentCalls)}
		s.sidecars[k] = sl
	}
	return sl
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
		Hardening: sl.hardening,
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
		if sl.standby != nil {
			st.StandbyPID = sl.standby.pid
		}
	case sl.starting != nil:
		st.Status = StatusStarting
	}
	return st
}
