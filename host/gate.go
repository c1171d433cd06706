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
	"time"

	"github.com/palyra-go/palyra/host/anomaly"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/broker"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/host/trust"
)

// run runs tool toolID of the current version of skillID with input: the
// gate every call passes, whatever asked for it (Call, SubmitForm, a hook).
// Before the sidecar, it checks the status row of that version, re-verifies
// the installed artifact against the trust store (no trust on first use;
// cached by artifact sha256 and trust store mtime), recomputes grants and
// limits from the manifest and the policy and validates input against the
// tool's input_schema; after it, it caps the output and validates it
// against the output_schema. On a failure the sidecar reported, the Result
// (stats, logs, tool error) is returned with the error.
//
// pre, when set, runs once the checks passed and before the sidecar is
// called (the run hooks' before phases); its error ends the call there,
// except a hook's request for approval, which becomes a reason of g's
// approval step. g is that step (nil: none).
func (h *Host) run(ctx context.Context, skillID, toolID string, input json.RawMessage, pre preSidecar, g *callGate) (*Result, error) {
	start := time.Now()
	id := strings.ToLower(strings.TrimSpace(skillID))
	res, version, err := h.call(ctx, id, toolID, input, pre, g)
	if errors.Is(err, ErrApprovalPending) {
		// A call waiting for approval did not run: nothing to count.
		return res, err
	}
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
	if err != nil && res == nil {
		// Refused before the sidecar ran: the journal keeps the refusals
		// an operator acts on (refusals.go).
		h.journalRefusal(ctx, id, version, toolID, err)
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
	h.calls.observe(rec, time.Now())
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

// preSidecar is what runs between the gate's checks and the sidecar: it
// is given the checked call (its version and its input, as validated).
type preSidecar func(ctx context.Context, p *checked) error

// call runs the call and returns the version it resolved ("" when none).
func (h *Host) call(ctx context.Context, id, toolID string, input json.RawMessage, pre preSidecar, g *callGate) (*Result, string, error) {
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, "", ErrClosed
	}
	if h.sup == nil {
		return nil, "", fmt.Errorf("host: %w: Config.SidecarPath is empty", supervisor.ErrSidecarNotFound)
	}
	gen := h.retired.Load()
	p, err := h.check(ctx, id, toolID, input, true)
	if err != nil {
		return nil, p.e.Version, err
	}
	if pre != nil {
		if err := pre(ctx, p); err != nil {
			var ask *HookApprovalRequest
			switch {
			case g != nil && !g.routed && errors.As(err, &ask):
				// A hook asks for a human: the approval step holds the
				// call (or lets it run with the approval it carries).
				g.hookReasons = append(g.hookReasons, HookApprovalReason(ask.HookID, ask.Reason))
			case g == nil && errors.As(err, &ask):
				// The call's approval was checked by the host it entered
				// (CallApproved): a human already said yes.
			default:
				return nil, p.e.Version, err
			}
		}
		// Run hooks may take seconds: a version disabled, quarantined or
		// removed meanwhile is not called after all.
		if h.retired.Load() != gen {
			cur, err := h.in.Inventory().SkillHead(ctx, p.e.SkillID, p.e.Version)
			if err != nil {
				return nil, p.e.Version, fmt.Errorf("host: %w: %s %s: %v", ErrSkillNotFound, p.e.SkillID, p.e.Version, err)
			}
			if err := statusGate(cur); err != nil {
				return nil, p.e.Version, err
			}
		}
	}
	if err := h.gateApprovals(ctx, p, toolID, g); err != nil {
		return nil, p.e.Version, err
	}
	e, t, dec, sch, input := p.e, p.t, p.dec, p.sch, p.input
	inv := broker.Invocation{ID: supervisor.NewInvocationID(), SkillID: e.SkillID, Version: e.Version, ToolID: toolID, Grants: dec.Grants, Limits: dec.Limits}
	if h.beforeSidecar != nil {
		h.beforeSidecar()
	}
	end := h.broker.Begin(inv)
	res, err := h.sup.Call(ctx, t, toolID, input, supervisor.CallOptions{InvocationID: inv.ID, Config: p.config})
	usage := end()
	h.stopIfRetired(ctx, e, gen)
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
	return res, e.Version, h.checkCallOutput(res, toolID, sch, p.palyraABI)
}

// callGate is what the gate needs of the caller beyond the call: the
// approval the call runs with. A nil *callGate is a call that needs no
// approval (a hook's call of its tool, a call whose approval another host
// of the cluster checked).
type callGate struct {
	approvalID string
	// routed is a call a peer of the cluster routed here after its own
	// approval step found no reason (Host.CallRouted): there is no
	// approval step here, and a run hook's request for one fails the
	// call (an approval made here would live where the caller cannot see
	// it: approvals live on the node the call entered).
	routed bool
	// hookReasons are the reasons run hooks gave to hold the call for
	// approval (filled by the run-hook step before the approval step).
	hookReasons []ApprovalReason
}

// gateApprovals is the approval step of the gate (see approvalGate); a
// nil g skips it.
func (h *Host) gateApprovals(ctx context.Context, p *checked, toolID string, g *callGate) error {
	if g == nil || g.routed {
		return nil
	}
	reasons := append(h.approvalReasons(p, toolID), g.hookReasons...)
	if err := h.approvalGate(ctx, p, toolID, g.approvalID, reasons); err != nil {
		return err
	}
	if len(reasons) > 0 {
		// The approved input is the canonical one: validate it as run.
		if err := p.sch.ValidateInputJSON(p.input); err != nil {
			return fmt.Errorf("host: %w: %s: %v", ErrInvalidInput, toolID, err)
		}
	}
	return nil
}

// checked is a call that passed the gate's checks before the sidecar.
type checked struct {
	m     *manifest.Manifest
	e     inventory.Entry
	t     supervisor.Target
	dec   *policy.Decision
	sch   *manifest.ToolSchemas
	input json.RawMessage
	// palyraABI is the verified module's (palyraabi.go).
	palyraABI bool
	// config is the skill's effective operator config (nil: none).
	config json.RawMessage
}

// check runs the gate's checks before the sidecar on a call of toolID of
// the current version of id: input size, status, (local) the
// supervisor's crashloop state, re-verification, policy, the tool and
// its input schema. The entry is set in the result as soon as it is
// known, even with an error.
func (h *Host) check(ctx context.Context, id, toolID string, input json.RawMessage, local bool) (*checked, error) {
	p := &checked{}
	if len(input) > MaxInputBytes {
		return p, fmt.Errorf("host: %w: the input of %s tool %s is %d bytes, over the %d-byte limit", ErrInputTooLarge, id, toolID, len(input), MaxInputBytes)
	}
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("null")
	}
	p.input = input
	e, err := h.in.Inventory().SkillHead(ctx, id, "")
	if err != nil {
		if errors.Is(err, inventory.ErrNotFound) {
			return p, fmt.Errorf("host: %w: %s: %v", ErrSkillNotFound, id, err)
		}
		return p, fmt.Errorf("host: %w", err)
	}
	p.e = e
	if err := statusGate(e); err != nil {
		return p, err
	}
	if local {
		if err := h.crashGate(e); err != nil {
			return p, err
		}
	}
	t, v, dec, err := h.target(ctx, e)
	if err != nil {
		return p, err
	}
	p.t, p.dec, p.m = t, dec, v.manifest
	sch, ok := v.schemas[toolID]
	if !ok {
		return p, fmt.Errorf("host: %w: %s has no tool %q", ErrUnknownTool, e.SkillID, toolID)
	}
	p.sch, p.palyraABI = sch, v.palyraABI
	if err := sch.ValidateInputJSON(input); err != nil {
		return p, fmt.Errorf("host: %w: %s: %v", ErrInvalidInput, toolID, err)
	}
	if p.config, err = h.resolveConfig(ctx, e, v); err != nil {
		return p, err
	}
	return p, nil
}

// checkOutput caps res's output and validates it against sch, clearing
// the output when it fails.
func (h *Host) checkOutput(res *Result, toolID string, sch *manifest.ToolSchemas) error {
	if len(res.Output) > h.cfg.MaxOutputBytes {
		n := len(res.Output)
		res.Output = nil
		return fmt.Errorf("host: %w: %d bytes, cap %d", ErrOutputTooLarge, n, h.cfg.MaxOutputBytes)
	}
	if err := sch.ValidateOutputJSON(res.Output); err != nil {
		res.Output = nil
		return fmt.Errorf("host: %w: %s: %v", ErrInvalidOutput, toolID, err)
	}
	return nil
}

// target re-verifies the installed version e and computes the Target its
// calls run: module, grants and limits (manifest ∩ policy) and tools.
func (h *Host) target(ctx context.Context, e inventory.Entry) (supervisor.Target, *verified, *policy.Decision, error) {
	v, err := h.verify(ctx, e)
	if err != nil {
		return supervisor.Target{}, nil, nil, err
	}
	// The decision is a function of the manifest and the profile: it is
	// kept with the verified version for the profile it was made under.
	profile := h.in.Policy()
	if pl := v.plan.Load(); pl != nil && pl.profile == profile && pl.installDir == e.InstallDir {
		return pl.t, v, pl.dec, nil
	}
	dec, err := profile.Evaluate(v.manifest)
	if err != nil {
		return supervisor.Target{}, nil, nil, fmt.Errorf("host: %w", err)
	}
	if !dec.Allowed() {
		return supervisor.Target{}, nil, nil, fmt.Errorf("host: %s %s: %w", e.SkillID, e.Version, dec.Err())
	}
	t := h.targetOf(e, v, dec)
	v.plan.Store(&callPlan{profile: profile, installDir: e.InstallDir, t: t, dec: dec})
	return t, v, dec, nil
}

// callPlan is what calls of a verified version run under one policy
// profile: the decision and the target.
type callPlan struct {
	profile    *policy.Profile
	installDir string
	t          supervisor.Target
	dec        *policy.Decision
}

// targetOf is the Target of e's calls under dec.
func (h *Host) targetOf(e inventory.Entry, v *verified, dec *policy.Decision) supervisor.Target {
	return targetFor(e.SkillID, e.Version, filepath.Join(h.in.StateDir(), filepath.FromSlash(e.InstallDir), filepath.FromSlash(v.module)), v, dec)
}

// targetFor is the Target of the calls of the module at modulePath, of
// the verified manifest v, under dec.
func targetFor(skillID, version, modulePath string, v *verified, dec *policy.Decision) supervisor.Target {
	g := dec.Grants
	l := dec.Limits
	return supervisor.Target{
		SkillID:      skillID,
		Version:      version,
		ModulePath:   modulePath,
		ModuleSHA256: v.sha,
		Entrypoint:   v.entrypoint,
		Limits: supervisor.Limits{
			Fuel: l.Fuel, MemoryBytes: int64(l.MaxMemoryBytes), TableElements: l.MaxTableElements,
			Instances: l.MaxInstances, Timeout: l.WallClock, MaxCapabilityCalls: uint32(max(0, min(l.MaxCapabilityCalls, 1<<31))),
		},
		Grants: supervisor.Grants{HTTPHosts: g.HTTPHosts, SecretKeys: g.SecretKeys, StoragePrefixes: g.StoragePrefixes, Channels: g.Channels},
		Tools:  v.tools,
	}
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
const PrincipalSupervisor = install.PrincipalSupervisor

// markCrashLooping records a crashlooping skill version in the inventory
// through the installer, the one writer of status rows (status
// crashlooping, event skill.crashlooping), so that operators see it; an
// operator's `skills enable` later lifts it. Only an active status is
// replaced (quarantined and disabled stay). A failure to record is logged.
func (h *Host) markCrashLooping(e inventory.Entry, cause error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	changed, marked, err := h.in.MarkCrashLooping(ctx, e.SkillID, e.Version, cause.Error(), PrincipalSupervisor)
	if err != nil {
		h.log.Error("recording crashlooping status", "skill_id", e.SkillID, "skill_version", e.Version, "error", err)
		return
	}
	h.log.Error("skill is crashlooping", "skill_id", e.SkillID, "skill_version", e.Version, "error", cause)
	if changed && !marked.IsZero() {
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
	tk := trustFileKey{}
	if fi, err := os.Stat(h.trust.Path()); err == nil {
		tk = trustFileKey{exists: true, mtime: fi.ModTime().UnixNano(), size: fi.Size()}
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
	if errors.Is(err, trust.ErrUntrustedPublisher) {
		// The install that pinned this publisher may still be saving the
		// pin (trust.File.LoadSettled): ask again once it is done.
		if store, err = h.trust.LoadSettled(ctx); err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
		vr, err = artifact.Verify(ctx, data, artifact.VerifyOptions{Trust: store.Decider(), AllowTOFU: false})
	}
	if err != nil {
		return nil, fmt.Errorf("host: %s %s: %w", e.SkillID, e.Version, err)
	}
	m := vr.Manifest
	if m.SkillID != e.SkillID && strings.ToLower(strings.TrimSpace(m.SkillID)) != e.SkillID {
		return nil, fmt.Errorf("host: %w: %s %s: artifact is for %s", install.ErrInstalledArtifact, e.SkillID, e.Version, m.SkillID)
	}
	v = &verified{trustKey: tk, manifest: m, schemas: map[string]*manifest.ToolSchemas{}}
	if v.config, err = m.ConfigSchema(); err != nil {
		return nil, fmt.Errorf("host: %s %s: %w", e.SkillID, e.Version, err)
	}
	for _, tl := range m.Entrypoints.Tools {
		s, err := m.ToolSchemas(tl.ID)
		if err != nil {
			return nil, fmt.Errorf("host: %s: %w", tl.ID, err)
		}
		v.schemas[tl.ID] = s
		// The sidecar gets the tool ids (it refuses any other) and no
		// schemas: input and output are checked once, here on the trusted
		// side, with the schemas compiled once per version (v.schemas).
		v.tools = append(v.tools, supervisor.Tool{ID: tl.ID})
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
	v.palyraABI = isPalyraABI(vr.Inspection.Entries[v.module])
	h.mu.Lock()
	h.verified[e.ArtifactSHA256] = v
	h.mu.Unlock()
	return v, nil
}
