package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host/anomaly"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/broker"
	"github.com/palyra-go/palyra/host/broker/egress"
	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
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
	// VulnFeedHook is passed to every audit (install.Config.VulnFeedHook);
	// palyra and palyra-host fill it from
	// $PALYRA_SKILL_AUDIT_VULN_FEED_HOOK.
	VulnFeedHook string
	// Logger receives the host's and sidecars' logs; nil discards them.
	Logger hclog.Logger
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
	// not).
	Storage *storage.Store
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
	// and Broker are taken from the fields above.
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
	// StartEagerly makes Open start a sidecar for the current version of
	// every active skill (one at a time, before Open returns) instead of
	// on its first call. A skill whose start fails is logged and left to
	// start on its first call.
	StartEagerly bool
}

// Host loads and calls installed skills. It is safe for concurrent use.
type Host struct {
	cfg   Config
	in    *install.Installer
	sup   *supervisor.Supervisor
	trust *trust.File
	log   hclog.Logger

	broker    *broker.Broker
	storage   *storage.Store
	ownsStore bool
	vault     *vault.Vault
	channels  *channels.Registry
	egress    *egress.Client
	stats     *callStats
	detector  *anomaly.Detector

	mu     sync.Mutex
	closed bool
	// verified caches trust verdicts by artifact sha256 and trust store
	// state, with the verified manifest and its compiled schemas.
	verified map[string]*verified
	// looped is when the host recorded a version crashlooping (the status
	// row's updated_at), by "id@version".
	looped map[string]time.Time
}

type verified struct {
	trustKey string
	manifest *manifest.Manifest
	schemas  map[string]*manifest.ToolSchemas
	tools    []supervisor.Tool
	module   string // module path inside the version dir
	sha      string // module sha256
	// entrypoint is operator.plugin.default_entrypoint ("" = the ABI's).
	entrypoint string
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
		cfg.CacheDir = DefaultCacheDir(cfg.StateDir)
	}
	if cfg.Policy == nil {
		p, _, err := policy.Resolve(cfg.StateDir, cfg.PolicyPath)
		if err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
		cfg.Policy = p
	}
	caps, err := openCapabilities(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	icfg := install.Config{StateDir: cfg.StateDir, Policy: cfg.Policy, TrustStore: cfg.TrustStore, VulnFeedHook: cfg.VulnFeedHook, SecretPresent: caps.secretPresent, Bus: cfg.Bus}
	if cfg.SidecarPath != "" {
		hook, err := PrecompileHook(cfg.SidecarPath, cfg.CacheDir)
		if err != nil {
			caps.close()
			return nil, err
		}
		icfg.Precompile = hook
	}
	in, err := install.Open(ctx, icfg)
	if err != nil {
		caps.close()
		return nil, fmt.Errorf("host: %w", err)
	}
	h := &Host{cfg: cfg, in: in, trust: trust.OpenFile(in.TrustStorePath()), log: cfg.Logger.Named("host"), verified: map[string]*verified{}, looped: map[string]time.Time{},
		broker: caps.broker, storage: caps.storage, ownsStore: caps.ownsStore, vault: caps.vault, channels: caps.channels, egress: caps.egress, stats: newCallStats()}
	if cfg.Anomaly != nil {
		h.detector = anomaly.NewDetector(*cfg.Anomaly, nil)
	}
	if cfg.SidecarPath != "" {
		sc := cfg.Supervisor
		sc.SidecarPath, sc.CacheDir, sc.Logger, sc.Broker = cfg.SidecarPath, cfg.CacheDir, cfg.Logger, cfg.Broker
		if sc.Broker == nil {
			sc.Broker = caps.broker
		}
		h.sup, err = supervisor.New(sc)
		if err != nil {
			in.Close()
			caps.close()
			return nil, fmt.Errorf("host: %w", err)
		}
		if cfg.StartEagerly {
			h.startEagerly(ctx)
		}
	}
	return h, nil
}

// Installer returns the host's installer (lifecycle operations: enable,
// disable, quarantine, remove, info, ...).
func (h *Host) Installer() *install.Installer { return h.in }

// Supervisor returns the host's supervisor (nil without a SidecarPath).
func (h *Host) Supervisor() *supervisor.Supervisor { return h.sup }

// Install verifies and installs an artifact (see install.Installer.Install).
func (h *Host) Install(ctx context.Context, data []byte, opts install.InstallOptions) (*install.InstallResult, error) {
	return h.in.Install(ctx, data, opts)
}

// Skills lists the installed skill versions.
func (h *Host) Skills(ctx context.Context) ([]install.Listing, error) {
	return h.in.List(ctx, install.ListOptions{})
}

// Call runs tool toolID of the current version of skillID with input.
// Before the sidecar, it checks the status row of that version, re-verifies
// the installed artifact against the trust store (no trust on first use;
// cached by artifact sha256 and trust store mtime), recomputes grants and
// limits from the manifest and the policy and validates input against the
// tool's input_schema; after it, it caps the output and validates it
// against the output_schema. On a failure the sidecar reported, the Result
// (stats, logs, tool error) is returned with the error.
func (h *Host) Call(ctx context.Context, skillID, toolID string, input json.RawMessage) (*Result, error) {
	start := time.Now()
	id := strings.ToLower(strings.TrimSpace(skillID))
	res, version, err := h.call(ctx, id, toolID, input)
	// Counters and records are per installed version: a call that named no
	// installed skill is not counted, so callers cannot grow them with ids
	// of their own making; nor is a tool id the skill does not have.
	if version == "" {
		return res, err
	}
	if errors.Is(err, ErrUnknownTool) {
		toolID = ""
	}
	h.stats.record(id, err)
	if h.detector == nil && h.cfg.OnCall == nil {
		return res, err
	}
	rec := CallRecord{SkillID: id, Version: version, ToolID: toolID, Code: errcode.Of(err), Duration: time.Since(start), Result: res}
	// A call that ended because its caller's context did (a short client
	// deadline, a cancel) says nothing about the skill: it is not counted.
	if h.detector != nil && err != nil && version != "" && ctx.Err() == nil {
		if trip, ok := h.detector.Observe(id, version, rec.Code, time.Now()); ok {
			rec.Anomaly = &trip
			h.quarantineAnomaly(ctx, trip)
		}
	}
	if h.cfg.OnCall != nil {
		h.cfg.OnCall(rec)
	}
	return res, err
}

// quarantineAnomaly quarantines the version a trip names, with its evidence
// as the reason. A failure to record is logged.
func (h *Host) quarantineAnomaly(ctx context.Context, trip anomaly.Trip) {
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := h.in.Quarantine(qctx, trip.SkillID, trip.Version, trip.Reason(), PrincipalAnomaly); err != nil {
		h.log.Error("anomaly quarantine failed", "skill_id", trip.SkillID, "skill_version", trip.Version, "kind", trip.Kind, "error", err)
		return
	}
	// The evidence is in the reason; an operator who re-enables the
	// version starts from a clean slate.
	h.detector.Forget(trip.SkillID, trip.Version)
	h.log.Warn("skill quarantined by the anomaly policy", "skill_id", trip.SkillID, "skill_version", trip.Version, "kind", trip.Kind, "count", trip.Count)
}

// call runs the call and returns the version it resolved ("" when none).
func (h *Host) call(ctx context.Context, id, toolID string, input json.RawMessage) (*Result, string, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, "", ErrClosed
	}
	if h.sup == nil {
		return nil, "", fmt.Errorf("host: %w: Config.SidecarPath is empty", supervisor.ErrSidecarNotFound)
	}
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("null")
	}
	e, err := h.in.Inventory().Skill(ctx, id, "")
	if err != nil {
		if errors.Is(err, inventory.ErrNotFound) {
			return nil, "", fmt.Errorf("host: %w: %s: %v", ErrSkillNotFound, id, err)
		}
		return nil, "", fmt.Errorf("host: %w", err)
	}
	if err := statusGate(e); err != nil {
		return nil, e.Version, err
	}
	if err := h.crashGate(e); err != nil {
		return nil, e.Version, err
	}
	t, v, dec, err := h.target(ctx, e)
	if err != nil {
		return nil, e.Version, err
	}
	sch, ok := v.schemas[toolID]
	if !ok {
		return nil, e.Version, fmt.Errorf("host: %w: %s has no tool %q", ErrUnknownTool, e.SkillID, toolID)
	}
	if err := sch.ValidateInputJSON(input); err != nil {
		return nil, e.Version, fmt.Errorf("host: %w: %s: %v", ErrInvalidInput, toolID, err)
	}
	inv := broker.Invocation{ID: supervisor.NewInvocationID(), SkillID: e.SkillID, Version: e.Version, ToolID: toolID, Grants: dec.Grants, Limits: dec.Limits}
	end := h.broker.Begin(inv)
	res, err := h.sup.CallWith(ctx, t, toolID, input, supervisor.CallOptions{InvocationID: inv.ID})
	usage := end()
	if err != nil {
		if errors.Is(err, supervisor.ErrCrashLooping) || h.sup.State(e.SkillID, e.Version).Status == supervisor.StatusCrashLooping {
			h.markCrashLooping(e, err)
		}
		if len(usage.Denials) > 0 {
			// The tool failed after the broker refused it something: that
			// refusal is the cause to report.
			return res, e.Version, &DeniedError{SkillID: e.SkillID, Version: e.Version, ToolID: toolID, Denial: usage.Denials[0], Cause: err}
		}
		return res, e.Version, fmt.Errorf("host: %s %s tool %s: %w", e.SkillID, e.Version, toolID, err)
	}
	if len(res.Output) > h.cfg.MaxOutputBytes {
		n := len(res.Output)
		res.Output = nil
		return res, e.Version, fmt.Errorf("host: %w: %d bytes, cap %d", ErrOutputTooLarge, n, h.cfg.MaxOutputBytes)
	}
	if err := sch.ValidateOutputJSON(res.Output); err != nil {
		res.Output = nil
		return res, e.Version, fmt.Errorf("host: %w: %s: %v", ErrInvalidOutput, toolID, err)
	}
	return res, e.Version, nil
}

// target re-verifies the installed version e and computes the Target its
// calls run: module, grants and limits (manifest ∩ policy) and tools.
func (h *Host) target(ctx context.Context, e inventory.Entry) (supervisor.Target, *verified, *policy.Decision, error) {
	v, err := h.verify(ctx, e)
	if err != nil {
		return supervisor.Target{}, nil, nil, err
	}
	dec, err := h.in.Policy().Evaluate(v.manifest)
	if err != nil {
		return supervisor.Target{}, nil, nil, fmt.Errorf("host: %w", err)
	}
	if !dec.Allowed() {
		return supervisor.Target{}, nil, nil, fmt.Errorf("host: %s %s: %w", e.SkillID, e.Version, dec.Err())
	}
	g := dec.Grants
	l := dec.Limits
	return supervisor.Target{
		SkillID:      e.SkillID,
		Version:      e.Version,
		ModulePath:   filepath.Join(h.in.StateDir(), filepath.FromSlash(e.InstallDir), filepath.FromSlash(v.module)),
		ModuleSHA256: v.sha,
		Entrypoint:   v.entrypoint,
		Limits: supervisor.Limits{
			Fuel: l.Fuel, MemoryBytes: int64(l.MaxMemoryBytes), TableElements: l.MaxTableElements,
			Instances: l.MaxInstances, Timeout: l.WallClock, MaxCapabilityCalls: uint32(max(0, min(l.MaxCapabilityCalls, 1<<31))),
		},
		Grants: supervisor.Grants{HTTPHosts: g.HTTPHosts, SecretKeys: g.SecretKeys, StoragePrefixes: g.StoragePrefixes, Channels: g.Channels},
		Tools:  v.tools,
	}, v, dec, nil
}

// startEagerly starts the sidecar of the current version of every active
// skill (Config.StartEagerly). Failures are logged.
func (h *Host) startEagerly(ctx context.Context) {
	entries, err := h.in.Inventory().Skills(ctx, inventory.Filter{CurrentOnly: true, Status: inventory.StatusActive})
	if err != nil {
		h.log.Error("eager start: listing skills", "error", err)
		return
	}
	for _, e := range entries {
		if !e.Current {
			continue
		}
		t, _, _, err := h.target(ctx, e)
		if err == nil {
			err = h.sup.Start(ctx, t)
		}
		if err != nil {
			h.log.Error("eager start failed", "skill_id", e.SkillID, "skill_version", e.Version, "error", err)
			continue
		}
		h.log.Debug("sidecar started eagerly", "skill_id", e.SkillID, "skill_version", e.Version)
	}
}

// PrincipalSupervisor is the principal of the crashlooping status the host
// records.
const PrincipalSupervisor = "system:supervisor"

// markCrashLooping records a crashlooping skill version in the inventory
// (status crashlooping, event skill.crashlooping), so that operators see
// it; an operator's `skills enable` later lifts it. Only an active status
// is replaced (quarantined and disabled stay). A failure to record is
// logged.
func (h *Host) markCrashLooping(e inventory.Entry, cause error) {
	reason := cause.Error()
	if len(reason) > 512 {
		reason = reason[:512]
	}
	var marked time.Time
	err := h.in.Inventory().Update(context.Background(), func(tx *inventory.Tx) error {
		st, err := tx.Status(e.SkillID, e.Version)
		if err != nil || st.Status != inventory.StatusActive {
			return err
		}
		if err := tx.SetStatus(inventory.StatusChange{
			SkillID: e.SkillID, Version: e.Version, Status: inventory.StatusCrashlooping,
			Reason: reason, Principal: PrincipalSupervisor,
		}); err != nil {
			return err
		}
		st, err = tx.Status(e.SkillID, e.Version)
		marked = st.UpdatedAt
		return err
	})
	if err != nil {
		h.log.Error("recording crashlooping status", "skill_id", e.SkillID, "skill_version", e.Version, "error", err)
		return
	}
	h.log.Error("skill is crashlooping", "skill_id", e.SkillID, "skill_version", e.Version, "error", cause)
	if !marked.IsZero() {
		h.mu.Lock()
		h.looped[e.SkillID+"@"+e.Version] = marked
		h.mu.Unlock()
	}
}

// crashGate refuses a version the supervisor holds as crashlooping, unless
// an operator re-enabled it in the inventory since: then the supervisor's
// crash history is reset.
func (h *Host) crashGate(e inventory.Entry) error {
	st := h.sup.State(e.SkillID, e.Version)
	if st.Status != supervisor.StatusCrashLooping {
		return nil
	}
	k := e.SkillID + "@" + e.Version
	h.mu.Lock()
	marked, ok := h.looped[k]
	h.mu.Unlock()
	if ok && e.Status != nil && e.Status.UpdatedAt.After(marked) {
		h.sup.Reset(e.SkillID, e.Version)
		h.mu.Lock()
		delete(h.looped, k)
		h.mu.Unlock()
		return nil
	}
	return fmt.Errorf("host: %w: %s %s: %s", ErrCrashLooping, e.SkillID, e.Version, st.LastError)
}

func statusGate(e inventory.Entry) error {
	if e.Status == nil {
		return fmt.Errorf("host: %w: %s %s", ErrNoStatus, e.SkillID, e.Version)
	}
	why := func() string {
		if e.Status.Reason != "" {
			return ": " + e.Status.Reason
		}
		return ""
	}
	switch e.Status.Status {
	case inventory.StatusActive:
		return nil
	case inventory.StatusQuarantined:
		return fmt.Errorf("host: %w: %s %s%s", ErrQuarantined, e.SkillID, e.Version, why())
	case inventory.StatusDisabled:
		return fmt.Errorf("host: %w: %s %s%s", ErrDisabled, e.SkillID, e.Version, why())
	case inventory.StatusCrashlooping:
		return fmt.Errorf("host: %w: %s %s%s", ErrCrashLooping, e.SkillID, e.Version, why())
	default:
		return fmt.Errorf("host: %w: %s %s has status %q", ErrDisabled, e.SkillID, e.Version, e.Status.Status)
	}
}

// verify re-verifies the installed artifact of e against the trust store
// as it is now, without trust on first use. The verdict is cached by the
// artifact's sha256 and the trust store's mtime and size.
func (h *Host) verify(ctx context.Context, e inventory.Entry) (*verified, error) {
	tk := "none"
	if fi, err := os.Stat(h.trust.Path()); err == nil {
		tk = fmt.Sprintf("%d/%d", fi.ModTime().UnixNano(), fi.Size())
	}
	h.mu.Lock()
	v := h.verified[e.ArtifactSHA256]
	h.mu.Unlock()
	if v != nil && v.trustKey == tk {
		return v, nil
	}
	dir := filepath.Join(h.in.StateDir(), filepath.FromSlash(e.InstallDir))
	data, err := os.ReadFile(filepath.Join(dir, install.ArtifactFile))
	if err != nil {
		return nil, fmt.Errorf("host: %w: %s %s: %v", install.ErrInstalledArtifact, e.SkillID, e.Version, err)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != e.ArtifactSHA256 {
		return nil, fmt.Errorf("host: %w: %s %s: artifact sha256 differs from the inventory", install.ErrInstalledArtifact, e.SkillID, e.Version)
	}
	store, err := h.trust.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	vr, err := artifact.Verify(ctx, data, artifact.VerifyOptions{Trust: store.Decider(), AllowTOFU: false})
	if err != nil {
		return nil, fmt.Errorf("host: %s %s: %w", e.SkillID, e.Version, err)
	}
	m := vr.Manifest
	if m.SkillID != e.SkillID && strings.ToLower(strings.TrimSpace(m.SkillID)) != e.SkillID {
		return nil, fmt.Errorf("host: %w: %s %s: artifact is for %s", install.ErrInstalledArtifact, e.SkillID, e.Version, m.SkillID)
	}
	v = &verified{trustKey: tk, manifest: m, schemas: map[string]*manifest.ToolSchemas{}}
	for _, tl := range m.Entrypoints.Tools {
		s, err := m.ToolSchemas(tl.ID)
		if err != nil {
			return nil, fmt.Errorf("host: %s: %w", tl.ID, err)
		}
		v.schemas[tl.ID] = s
		in, _ := json.Marshal(tl.InputSchema)
		out, _ := json.Marshal(tl.OutputSchema)
		if tl.InputSchema == nil {
			in = nil
		}
		if tl.OutputSchema == nil {
			out = nil
		}
		v.tools = append(v.tools, supervisor.Tool{ID: tl.ID, InputSchema: in, OutputSchema: out})
	}
	var mod string
	if pl := m.Operator.Plugin; pl != nil {
		mod, v.entrypoint = pl.DefaultModulePath, pl.DefaultEntrypoint
	}
	if mod != "" && !strings.HasPrefix(mod, "modules/") {
		mod = path.Join("modules", mod)
	}
	for _, f := range m.Integrity.Files {
		if (mod == "" && strings.HasPrefix(f.Path, "modules/") && strings.HasSuffix(f.Path, ".wasm")) || f.Path == mod {
			v.module, v.sha = f.Path, strings.ToLower(f.SHA256)
			break
		}
	}
	if v.module == "" {
		return nil, fmt.Errorf("host: %w: %s %s", ErrNoModule, e.SkillID, e.Version)
	}
	h.mu.Lock()
	h.verified[e.ArtifactSHA256] = v
	h.mu.Unlock()
	return v, nil
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
	if h.sup != nil {
		errs = append(errs, h.sup.Close(ctx))
	}
	errs = append(errs, h.in.Close())
	if h.ownsStore {
		errs = append(errs, h.storage.Close())
	}
	return errors.Join(errs...)
}
