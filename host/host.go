package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host/anomaly"
	"github.com/palyra-go/palyra/host/broker"
	"github.com/palyra-go/palyra/host/broker/egress"
	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/rundir"
	"github.com/palyra-go/palyra/host/source"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/host/vault"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// DefaultMaxOutputBytes caps a tool's output (sdk/ABI.md: 1 MiB).
const DefaultMaxOutputBytes = 1 << 20

// Config configures a Host.
type Config struct {
	// StateDir holds the inventory, the trust store and the installed
	// skills. Required.
	StateDir string
	// Policy is the operator profile; PolicyPath loads one from a file
	// when Policy is nil. With neither, <state>/policy.toml applies when it
	// exists, else the default profile (policy.Resolve).
	Policy     *policy.Profile
	PolicyPath string
	// TrustStore overrides the trust store path (default
	// <state>/skills/trust-store.json). Nothing in the host reads the
	// environment: palyra and palyra-host put $PALYRA_SKILLS_TRUST_STORE
	// here.
	TrustStore string
	// Logger receives the host's and sidecars' logs; nil discards them.
	Logger hclog.Logger
	// Sources configures fetching from registries (install from a source,
	// outdated, update, apply); its Trust and Logger are the host's.
	Sources source.Config
	// SidecarPath is the palyra-sidecar binary. Required to Call.
	SidecarPath string
	// CacheDir is the precompiled-module cache (default <state>/cache/modules).
	CacheDir string
	// Vault holds the secrets skills use; nil opens the state dir's vault
	// (<state>/secrets) with the key from VaultKey, else VaultKeyCommand,
	// else <state>/secrets/vault.key.
	Vault *vault.Vault
	// VaultKey is the vault key as base64 of 32 bytes, and VaultKeyCommand
	// a shell command that prints it (vault.Config.EncodedKey and
	// KeyCommand); used only when Vault is nil. palyra and palyra-host
	// fill them from $PALYRA_VAULT_KEY and $PALYRA_VAULT_KEY_COMMAND.
	VaultKey, VaultKeyCommand string
	// Storage is the skills' key-value store; nil opens
	// <state>/storage/storage.db (closed by Close; a Storage given here is
	// not). A clustered node passes the cluster's backend
	// (cluster.Link.SkillStorage), so skills keep one state cluster-wide.
	Storage storage.Backend
	// Channels are the channels skills may send to; nil is an empty
	// registry (every channel "unavailable") that Channels() returns for
	// the application to fill.
	Channels *channels.Registry
	// Egress configures the broker's HTTP client (resolver, TLS roots).
	Egress egress.Config
	// Broker replaces the host's capability broker (tests, custom
	// backends); nil uses the built-in one over Vault, Storage, Channels
	// and Egress.
	Broker sidecarplugin.Broker
	// Supervisor tunes the supervisor; its SidecarPath, CacheDir, Logger
	// and Broker are taken from the fields above. Leave its SocketDir
	// empty: the host then puts its children's private directories in a
	// runtime directory of its own under the state directory (or, for a
	// long state directory path, a private one in $TMPDIR), which the next
	// host start removes if this host dies (host/rundir). A SocketDir set
	// here is used as is and belongs to the caller.
	Supervisor supervisor.Config
	// MaxOutputBytes caps a tool's output (default 1 MiB).
	MaxOutputBytes int
	// Bus receives an event after every lifecycle change the host's
	// installer commits (install, enable, disable, quarantine, remove);
	// nil publishes none. The inventory journals every change either way.
	Bus *events.Bus
	// Anomaly, when set, quarantines a skill version whose calls keep
	// ending in anomalies (fuel exhaustion, traps, timeouts, capability
	// denials, ...) past the policy's thresholds within its window, with
	// the evidence as the reason and principal PrincipalAnomaly.
	Anomaly *anomaly.Policy
	// OnCall, when set, is called after every Call with what it did
	// (metrics, request logs). It must not block.
	OnCall func(CallRecord)
	// DispatchHooks makes the host follow the inventory journal and run the
	// hooks bound to each lifecycle event (skill:enabled,
	// skill:quarantined, ...) as it is journaled, by this host or by any
	// process working on the state dir. Each binding is delivered the
	// journal from its cursor (host/hooks, "Delivery from the journal"):
	// when the host opens, it catches up on the events journaled while no
	// host dispatched hooks (the CLI's changes while the daemon was down),
	// then follows; at least once, in journal order. A skill's hooks see
	// the events one at a time; other skills' hooks run in parallel.
	// Without it hooks run only when fired (FireHooks).
	DispatchHooks bool
	// HookTimeout is the time limit of a hook call whose binding sets none
	// (hooks.DefaultTimeout when ≤ 0).
	HookTimeout time.Duration
	// HookRetries is how many times, with DispatchHooks, a hook that failed
	// on a journal event is tried again before the host gives up on it,
	// journals a skill.hook_gave_up event and moves the binding's cursor on
	// (hooks.DefaultRetries when 0; none when < 0). HookRetryBackoff is the
	// wait before the first retry, doubled for each next one
	// (hooks.DefaultRetryBackoff when ≤ 0).
	HookRetries      int
	HookRetryBackoff time.Duration
	// OnHook, when set, is called with every hook outcome (metrics). It
	// must not block.
	OnHook func(hooks.Outcome)
	// ReadOnly opens the state dir for looking only: nothing is created,
	// migrated, recovered or locked, and the state dir stays exactly as
	// it was (or absent). List, Info, Hooks and Sidecars (none run) work;
	// every other verb fails with ErrReadOnly. The CLI's list and info
	// open the host this way.
	ReadOnly bool
	// StartEagerly makes Open start a sidecar for the current version of
	// every active skill (one at a time, before Open returns) instead of
	// on its first call. A skill whose start fails is logged and left to
	// start on its first call.
	StartEagerly bool
	// ApprovalTTL is how long a call's approval waits for its decision
	// and, once approved, for its use (DefaultApprovalTTL when zero;
	// MinApprovalTTL..MaxApprovalTTL).
	ApprovalTTL time.Duration
	// Clock, when set, is the host's clock for approvals (requested,
	// expiry, decisions); nil is time.Now. Tests set it.
	Clock func() time.Time
}

// Host loads and calls installed skills. It is safe for concurrent use.
type Host struct {
	cfg Config
	in  *install.Installer
	// ro is the state dir's reader when the host is open read-only (then
	// in, the supervisor, the capabilities and the hooks dispatcher are
	// nil).
	ro  *install.Reader
	sup *supervisor.Supervisor
	// retired counts the lifecycle changes that took a version out of
	// service (stopRetired); a call that sees it move re-checks its
	// version after the sidecar answered (stopIfRetired).
	retired *atomic.Uint64
	// refused coalesces the journal's records of refused calls.
	refused refusals
	// beforeSidecar, when set (by tests only), runs between a call's
	// checks and its sidecar call.
	beforeSidecar func()
	trust         *trust.File
	log           hclog.Logger
	// runDir is the host's runtime directory, holding its children's
	// private directories (nil without sidecars, or with
	// Supervisor.SocketDir set: then the caller owns that directory).
	runDir *rundir.Instance

	broker    *broker.Broker
	storage   storage.Backend
	ownsStore bool
	vault     *vault.Vault
	channels  *channels.Registry
	egress    *egress.Client
	stats     *callStats
	detector  *anomaly.Detector
	sources   *source.Fetcher

	mu sync.Mutex
	// policyMu orders SetPolicy's file write and profile swap.
	policyMu sync.Mutex
	closed   bool
	// verified caches trust verdicts by artifact sha256 and trust store
	// state, with the verified manifest and its compiled schemas.
	verified map[string]*verified
	// looped is when the host recorded a version crashlooping (the status
	// row's updated_at), by "id@version".
	looped map[string]time.Time

	// calls summarizes each skill's calls (SkillMetrics).
	calls *callSummary
	// docs keeps the A2UI documents calls returned, for form submits.
	docs    *docStore
	catalog catalog
	hooks   *hooks.Store
	disp    *hooks.Dispatcher

	// wake carries the installer's events: each one wakes the journal
	// follower, which publishes on stream in journal order.
	wake      *events.Bus
	stream    *events.Bus
	following bool         // the journal follower runs (under mu)
	cursor    atomic.Int64 // last journal event the follower published
	// loopCtx ends when the host closes; loops waits for the goroutines
	// that run until then.
	loopCtx  context.Context
	stopLoop context.CancelFunc
	loops    sync.WaitGroup

	// inlineMu guards the inline modules' directory (made on the first
	// inline run, removed at Close) and the module last run under each
	// inline skill id.
	inlineMu  sync.Mutex
	inlineDir string
	inline    map[string]inlineLoaded
}

// trustFileKey is what a verification saw of the trust store's file: a
// verification made under another is made again.
type trustFileKey struct {
	exists      bool
	mtime, size int64
}

type verified struct {
	trustKey trustFileKey
	manifest *manifest.Manifest
	schemas  map[string]*manifest.ToolSchemas
	tools    []supervisor.Tool
	module   string // module path inside the version dir
	sha      string // module sha256
	// entrypoint is operator.plugin.default_entrypoint ("" = the ABI's).
	entrypoint string
	// palyraABI: the module imports nothing from palyra:skills/host@1,
	// so its result is the exit code (palyraabi.go).
	palyraABI bool
	// config is the compiled [config] schema (nil without one).
	config *manifest.ConfigSchema
	// plan is the decision and target of the last policy profile calls
	// ran under.
	plan atomic.Pointer[callPlan]
}

// Result is a successful call's output and stats.
type Result = supervisor.Result

// CallRecord is what Config.OnCall receives after a call.
type CallRecord struct {
	// SkillID, Version and ToolID name the call; ToolID is "" when the
	// skill has no such tool. Calls that resolved to no installed version
	// (an unknown skill id) make no record.
	SkillID, Version, ToolID string
	// Code is the error code of a failed call ("" on success).
	Code     string
	Duration time.Duration
	// Result is the sidecar's report (nil when the call never reached
	// the sidecar).
	Result *Result
	// Anomaly is set when this call tripped the anomaly policy and the
	// version was quarantined.
	Anomaly *anomaly.Trip
}

// PrincipalAnomaly is the principal of a quarantine the anomaly policy
// caused.
const PrincipalAnomaly = "system:anomaly"

// Open opens (creating when needed) the state dir and returns a Host.
func Open(ctx context.Context, cfg Config) (*Host, error) {
	if cfg.StateDir == "" {
		return nil, errors.New("host: Config.StateDir is empty")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.MaxOutputBytes <= 0 {
		cfg.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if cfg.CacheDir == "" {
		cfg.CacheDir = statedir.At(cfg.StateDir).ModuleCache()
	}
	if cfg.Policy == nil {
		p, _, err := policy.Resolve(cfg.StateDir, cfg.PolicyPath)
		if err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
		cfg.Policy = p
	}
	if err := checkApprovalTTL(cfg.ApprovalTTL); err != nil {
		return nil, err
	}
	if cfg.ReadOnly {
		return openReadOnly(ctx, cfg)
	}
	caps, err := openCapabilities(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	wake := cfg.Bus
	if wake == nil {
		wake = &events.Bus{}
	}
	icfg := install.Config{StateDir: cfg.StateDir, Policy: cfg.Policy, TrustStore: cfg.TrustStore, SecretPresent: caps.secretPresent, Bus: wake,
		TrustOptions: []trust.Option{trust.WithVault(caps.vault), trust.WithLogger(cfg.Logger.Named("trust"))}}
	var sup *supervisor.Supervisor // made below; installs (and so precompiles) run only after Open
	retired := new(atomic.Uint64)
	if cfg.SidecarPath != "" {
		icfg.Precompile = func(ctx context.Context, modulePath, sha string) error { return sup.Precompile(ctx, modulePath, sha) }
		icfg.OnChange = func(ev events.Event) { stopRetired(sup, retired, ev) }
	}
	in, err := install.Open(ctx, icfg)
	if err != nil {
		caps.close()
		return nil, fmt.Errorf("host: %w", err)
	}
	h := &Host{cfg: cfg, in: in, trust: in.TrustFile(), retired: retired, log: cfg.Logger.Named("host"), verified: map[string]*verified{}, looped: map[string]time.Time{},
		broker: caps.broker, storage: caps.storage, ownsStore: caps.ownsStore, vault: caps.vault, channels: caps.channels, egress: caps.egress, stats: newCallStats(),
		calls: newCallSummary(), docs: newDocStore(maxDocuments, documentTTL), wake: wake, stream: &events.Bus{},
		hooks: hooks.OpenStore(cfg.StateDir, hooks.WithJournalHead(in.Inventory().LastEventID))}
	scfg := cfg.Sources
	scfg.Trust = h.decideRegistryKey
	scfg.Logger = cfg.Logger.Named("source")
	h.sources = source.New(scfg)
	h.loopCtx, h.stopLoop = context.WithCancel(context.Background())
	h.disp = hooks.NewDispatcher(hooks.DispatcherConfig{
		Store: h.hooks, Call: h.hookCall, Timeout: cfg.HookTimeout,
		Logger: cfg.Logger.Named("hooks"), OnOutcome: h.hookOutcome,
		Journal: hookJournal{h}, Retries: cfg.HookRetries, RetryBackoff: cfg.HookRetryBackoff, OnGiveUp: h.hookGaveUp,
	})
	if cfg.Anomaly != nil {
		h.detector = anomaly.NewDetector(*cfg.Anomaly, nil)
	}
	h.sweepRunDirs()
	if cfg.SidecarPath != "" {
		sc := cfg.Supervisor
		sc.SidecarPath, sc.CacheDir, sc.Logger, sc.Broker = cfg.SidecarPath, cfg.CacheDir, cfg.Logger, cfg.Broker
		if sc.Broker == nil {
			sc.Broker = caps.broker
		}
		if sc.SocketDir == "" {
			h.runDir, err = acquireRunDir(cfg.StateDir)
			if err == nil {
				sc.SocketDir = h.runDir.Dir()
			}
		}
		if err == nil {
			h.sup, err = supervisor.New(sc)
			sup = h.sup
		}
		if err != nil {
			h.stopLoop()
			h.disp.Close(ctx)
			if h.runDir != nil {
				h.runDir.Close()
			}
			in.Close()
			caps.close()
			return nil, fmt.Errorf("host: %w", err)
		}
		if cfg.StartEagerly {
			h.startEagerly(ctx)
		}
	}
	if cfg.DispatchHooks {
		if err := h.startFollower(); err != nil {
			h.Close(ctx)
			return nil, err
		}
	}
	return h, nil
}

// Close stops every sidecar and closes the inventory. It is idempotent.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.mu.Unlock()
	var errs []error
	// The journal follower and event streams end first; then the hooks
	// (their calls need the sidecars) and the sidecars.
	h.stopLoop()
	h.loops.Wait()
	if h.ro != nil {
		return h.ro.Close()
	}
	errs = append(errs, h.disp.Close(ctx))
	if h.sup != nil {
		errs = append(errs, h.sup.Close(ctx))
	}
	// After the supervisor: no sidecar reads an inline module then.
	errs = append(errs, h.closeInline())
	if h.runDir != nil {
		// After the supervisor: its children are gone by then.
		errs = append(errs, h.runDir.Close())
	}
	errs = append(errs, h.in.Close())
	if h.ownsStore {
		errs = append(errs, h.storage.Close())
	}
	return errors.Join(errs...)
}
