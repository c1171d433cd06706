package install

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/textutil"
)

// Principals the Installer writes when the caller names none.
const (
	// PrincipalInstall is the principal of the status an install writes.
	PrincipalInstall = "system:install"
	// PrincipalReaudit is the principal of a quarantine made by Reaudit.
	PrincipalReaudit = "system:reaudit"
	// PrincipalLocal is the principal of an operator action that names
	// none (Palyra's CLI default).
	PrincipalLocal = "user:local"
)

// DefaultLockTimeout is how long an operation waits for another operation
// on the same skill (in this process or another) before failing with
// ErrLocked, when Config.LockTimeout is zero. An install holds the lock
// for the time it takes to write and fsync one artifact, well under a
// second for the largest artifact.
const DefaultLockTimeout = 30 * time.Second

// Config configures Open. The zero value of every field but StateDir has a
// default; Config must not be modified after Open. Nothing here is read
// from the environment: the commands resolve their flags and variables
// ($PALYRA_STATE_DIR, $PALYRA_SKILLS_TRUST_STORE) into these fields.
type Config struct {
	// StateDir is the state directory (statedir.Layout names its files).
	// Required; a relative path is made absolute.
	StateDir string
	// Policy is the operator profile every install, enable and re-audit
	// is judged by. nil means policy.Default().
	Policy *policy.Profile
	// TrustStore is the trust store file. "" means the state directory's,
	// <state>/skills/trust-store.json (statedir.Layout.TrustStore).
	TrustStore string
	// TrustOptions configure the trust store file (trust.OpenFile): the
	// host passes trust.WithVault so its integrity MAC is keyed from the
	// vault, and its logger.
	TrustOptions []trust.Option
	// Bus receives an event after every change is committed. nil publishes
	// nothing (the inventory journal still records every change).
	Bus *events.Bus
	// OnChange, when set, is called with every event Bus would receive,
	// synchronously: after the change is committed, before it is
	// published on Bus and before the verb that made it returns (with the
	// skill's lock still held, so it must not call the Installer). The
	// host stops the sidecars of a version disabled, quarantined or
	// removed through it, so that they are gone when the verb returns.
	OnChange func(events.Event)
	// Now is the clock for install times, status changes and events.
	// nil means time.Now.
	Now func() time.Time
	// LockTimeout bounds the wait for another operation on the same skill
	// (DefaultLockTimeout when zero). The caller's ctx can end it sooner.
	LockTimeout time.Duration
	// InventoryOptions are passed to inventory.Open (after the clock).
	InventoryOptions []inventory.Option
	// Precompile, when set, is called by Install for every module
	// (modules/*.wasm) of the artifact, on the staged copy, before the
	// version directory is moved into place; sha256 is the module's hex
	// digest. It is meant to compile the module into the runtime's cache
	// in a separate process (palyra-sidecar precompile), so that compiling
	// untrusted code never happens in the host process. A failure does not
	// stop the install: the version is kept quarantined with the reason
	// "precompile_failed: <message>" and Install returns an error wrapping
	// ErrPrecompileFailed, or, when the hook's error wraps
	// ErrCompileBudgetExceeded, "compile_budget_exceeded: <message>" and
	// that code. A cancelled ctx fails the install instead.
	Precompile func(ctx context.Context, modulePath, sha256 string) error
	// SecretPresent, when set, tells whether the vault holds a value for
	// a secret (as Palyra's install does): Install records every secret the manifest
	// requests and the vault lacks (wildcard keys always) in
	// InstallResult.MissingSecrets and the inventory. A missing secret
	// does not block the install. An error is treated as missing.
	SecretPresent func(ctx context.Context, scope, key string) (bool, error)
}

// Installer admits skills into a state directory and changes their
// lifecycle state. It owns the inventory database it opened.
//
// An Installer is safe for concurrent use by many goroutines, and several
// processes may use the same state directory at once: operations on one
// skill are serialized by a per-skill lock file, operations on different
// skills run in parallel, and the inventory serializes its own writers.
// Close it when done; a closed Installer fails every call with ErrClosed.
type Installer struct {
	layout      statedir.Layout
	state       string // layout.Dir()
	skillsDir   string // layout.SkillsDir()
	db          *inventory.DB
	trust       *trust.File
	profile     atomic.Pointer[policy.Profile] // swapped by SetPolicy
	bus         *events.Bus
	onChange    func(events.Event)
	now         func() time.Time
	lockTimeout time.Duration
	recovered   *RecoverReport
	precompile  func(ctx context.Context, modulePath, sha256 string) error
	secretOK    func(ctx context.Context, scope, key string) (bool, error)
	// readOnly is set for the Installer inside a Reader: its database is
	// open read-only and it takes no skill lock (taking one may create
	// the lock file).
	readOnly bool

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
}

// Open opens (creating and migrating when needed) the inventory database
// of the state directory, <state>/inventory.db, and runs Recover, so that
// whatever a crashed install or remove left behind is repaired before the
// first call. ctx governs the opening and the recovery. To look without
// changing anything, use OpenReadOnly.
func Open(ctx context.Context, cfg Config) (*Installer, error) {
	in, err := newInstaller(cfg)
	if err != nil {
		return nil, err
	}
	opts := append([]inventory.Option{inventory.WithClock(in.now)}, cfg.InventoryOptions...)
	in.db, err = inventory.Open(ctx, in.layout.Inventory(), opts...)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	rep, err := in.Recover(ctx)
	if err != nil {
		_ = in.db.Close()
		return nil, err
	}
	in.recovered = rep
	return in, nil
}

// newInstaller checks cfg and fills in its defaults; the database is the
// caller's to open.
func newInstaller(cfg Config) (*Installer, error) {
	if cfg.StateDir == "" {
		return nil, fmt.Errorf("%w: Config.StateDir is empty", ErrInvalidArgument)
	}
	state, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("%w: Config.StateDir %q: %v", ErrInvalidArgument, cfg.StateDir, err)
	}
	layout := statedir.At(state)
	trustPath := layout.TrustStore()
	if cfg.TrustStore != "" {
		if trustPath, err = filepath.Abs(cfg.TrustStore); err != nil {
			return nil, fmt.Errorf("%w: Config.TrustStore %q: %v", ErrInvalidArgument, cfg.TrustStore, err)
		}
	}
	in := &Installer{
		layout:      layout,
		state:       layout.Dir(),
		skillsDir:   layout.SkillsDir(),
		trust:       trust.OpenFile(trustPath, cfg.TrustOptions...),
		bus:         cfg.Bus,
		onChange:    cfg.OnChange,
		now:         cfg.Now,
		lockTimeout: cfg.LockTimeout,
		secretOK:    cfg.SecretPresent,
		precompile:  cfg.Precompile,
	}
	prof := cfg.Policy
	if prof == nil {
		prof = policy.Default()
	}
	if err := prof.Validate(); err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	in.profile.Store(prof)
	if in.now == nil {
		in.now = time.Now
	}
	if in.lockTimeout <= 0 {
		in.lockTimeout = DefaultLockTimeout
	}
	return in, nil
}

// Close closes the inventory database. It is idempotent and returns the
// first call's result. Operations still running finish first.
func (in *Installer) Close() error {
	in.closeOnce.Do(func() {
		in.closed.Store(true)
		in.closeErr = in.db.Close()
	})
	return in.closeErr
}

// Recovered returns what Open's recovery repaired.
func (in *Installer) Recovered() *RecoverReport { return in.recovered }

// Inventory returns the inventory database, for reads (lists, history,
// the journal). Writes must go through the Installer, which keeps the
// files and the database in step.
func (in *Installer) Inventory() *inventory.DB { return in.db }

// StateDir returns the absolute state directory.
func (in *Installer) StateDir() string { return in.state }

// Layout returns the paths of the state directory.
func (in *Installer) Layout() statedir.Layout { return in.layout }

// TrustStorePath returns the trust store file the Installer decides with.
func (in *Installer) TrustStorePath() string { return in.trust.Path() }

// TrustFile returns the trust store file the Installer decides with, with
// its options (Config.TrustOptions).
func (in *Installer) TrustFile() *trust.File { return in.trust }

// Policy returns the operator profile the Installer judges by now.
func (in *Installer) Policy() *policy.Profile { return in.profile.Load() }

// SetPolicy replaces the operator profile the Installer judges by, for
// every install, enable and re-audit after it (one in progress keeps the
// profile it started with). An invalid profile is refused with
// policy.ErrInvalidProfile and the current one kept.
func (in *Installer) SetPolicy(p *policy.Profile) error {
	if p == nil {
		return fmt.Errorf("install: %w: no profile", policy.ErrInvalidProfile)
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	in.profile.Store(p)
	return nil
}

// VersionDir returns the directory of an installed version:
// <state>/skills/<skill_id>/<version>. It does not check that it exists.
func (in *Installer) VersionDir(id, version string) string {
	return in.layout.VersionDir(id, version)
}

func (in *Installer) check(ctx context.Context) error {
	if in.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	return nil
}

func (in *Installer) lock(ctx context.Context, id string) (*skillLock, error) {
	if in.readOnly {
		// A Reader only reads: it never sees a half-made version (those
		// live under staging names until renamed into place) and has
		// nothing to serialize. Its unlock is a no-op.
		return &skillLock{}, nil
	}
	return lockSkill(ctx, in.layout.SkillDir(id), in.lockTimeout, false)
}

// normalizeID trims and lower-cases a skill id and checks that it is a
// safe single path element (an identifier of [a-z0-9._-] that does not
// start with a dot).
func normalizeID(id string) (string, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if id == "" || len(id) > inventory.MaxIdentifierBytes || id[0] == '.' || strings.HasSuffix(id, ".") || strings.Contains(id, "..") {
		return "", fmt.Errorf("%w: skill id %q", ErrInvalidArgument, id)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return "", fmt.Errorf("%w: skill id %q", ErrInvalidArgument, id)
		}
	}
	return id, nil
}

// normalizeVersion returns the canonical MAJOR.MINOR.PATCH of v, or ""
// for a blank v (the current version).
func normalizeVersion(v string) (string, error) {
	if strings.TrimSpace(v) == "" {
		return "", nil
	}
	sv, err := manifest.ParseVersion(v)
	if err != nil {
		return "", fmt.Errorf("%w: version %q: %w", ErrInvalidArgument, v, err)
	}
	return sv.String(), nil
}

// entry reads an installed version ("" = current).
// lockedEntry is the start of every operation on an installed version: the
// installer must be open, the key is normalized, the skill's lock taken and
// the entry read. On success the caller owns the lock and unlocks it.
func (in *Installer) lockedEntry(ctx context.Context, id, version string) (inventory.Entry, *skillLock, error) {
	if err := in.check(ctx); err != nil {
		return inventory.Entry{}, nil, err
	}
	id, version, err := normalizeKey(id, version)
	if err != nil {
		return inventory.Entry{}, nil, err
	}
	lk, err := in.lock(ctx, id)
	if err != nil {
		return inventory.Entry{}, nil, err
	}
	e, err := in.entry(ctx, id, version)
	if err != nil {
		lk.unlock()
		return inventory.Entry{}, nil, err
	}
	return e, lk, nil
}

func (in *Installer) entry(ctx context.Context, id, version string) (inventory.Entry, error) {
	e, err := in.db.Skill(ctx, id, version)
	if err != nil {
		return inventory.Entry{}, fmt.Errorf("install: %w", err)
	}
	return e, nil
}

// decodeManifest decodes a manifest recorded in the inventory.
func decodeManifest(raw json.RawMessage) (*manifest.Manifest, error) {
	var m manifest.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("install: recorded manifest: %w", err)
	}
	return &m, nil
}

// publish hands every event to Config.OnChange, then sends it to the bus,
// if any.
func (in *Installer) publish(evs ...events.Event) {
	for _, ev := range evs {
		if in.onChange != nil {
			in.onChange(ev)
		}
		if in.bus != nil {
			in.bus.Publish(ev)
		}
	}
}

// lastStatusEventID returns the journal id of the newest status event of
// (id, version), for the bus event that mirrors it; 0 when not found.
// The caller holds the skill's lock, so that event is the one it wrote.
func (in *Installer) lastStatusEventID(ctx context.Context, id, version string) int64 {
	hist, err := in.db.StatusHistory(ctx, id)
	if err != nil {
		return 0
	}
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Version == version {
			return hist[i].ID
		}
	}
	return 0
}

// boundReason cuts a reason the Installer composes (joined audit findings)
// to inventory.MaxReasonBytes, at a rune boundary, marking the cut.
func boundReason(s string) string {
	if len(s) <= inventory.MaxReasonBytes {
		return s
	}
	const mark = " [...]"
	return textutil.Truncate(s, inventory.MaxReasonBytes-len(mark)) + mark
}
