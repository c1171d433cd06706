package host

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/supervisor"
)

// The lifecycle verbs of the Service on the local host: each one is the
// installer's, with who acts taken from the context. A change that takes a
// version out of service (disable, quarantine, remove, by an operator, the
// anomaly policy, a re-audit, a desired-state apply or a cluster op) stops
// its sidecars before the verb returns (stopRetired).

// retireStopTimeout bounds how long a lifecycle change waits for a start
// of the version's sidecar under way before it stops the sidecars; their
// graceful stop is bounded by supervisor.DefaultStopTimeout.
const retireStopTimeout = 30 * time.Second

// stopRetired stops the sidecars (serving and standby) of the version ev
// takes out of service: disabled, quarantined or removed. The installer
// calls it after the change is committed and before its verb returns
// (install.Config.OnChange), so a disabled skill's sidecar is gone when
// `skills disable` answers. Other events, and a host without sidecars
// (sup nil), do nothing.
//
// It counts the change in retired first: a call that passed its checks
// just before the change may start the version's sidecar again after this
// stop, and it finds out by that count (Host.stopIfRetired).
func stopRetired(sup *supervisor.Supervisor, retired *atomic.Uint64, ev events.Event) {
	if sup == nil {
		return
	}
	switch ev.Kind {
	case events.SkillDisabled, events.SkillQuarantined, events.SkillRemoved:
	default:
		return
	}
	retired.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), retireStopTimeout)
	defer cancel()
	sup.Stop(ctx, ev.SkillID, ev.Version)
}

// stopIfRetired closes the race stopRetired leaves: a call that passed the
// status check (when retired was gen) before a disable, quarantine or
// remove can start the version's sidecar after stopRetired stopped it, and
// that sidecar would idle until its idle timeout. When retired moved since
// gen, the version's status is read again and, unless it is still active,
// its sidecars are stopped. A call that saw no change pays one atomic load.
func (h *Host) stopIfRetired(ctx context.Context, e inventory.Entry, gen uint64) {
	if h.retired.Load() == gen {
		return
	}
	cur, err := h.in.Inventory().SkillHead(context.WithoutCancel(ctx), e.SkillID, e.Version)
	if err == nil && statusGate(cur) == nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), retireStopTimeout)
	defer cancel()
	h.sup.Stop(sctx, e.SkillID, e.Version)
}

// Install implements Service.
func (h *Host) Install(ctx context.Context, req InstallRequest) (*InstallResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	if req.From != nil && len(req.TrustedPublishers) > 0 && !req.DryRun {
		// A registry index's key is judged by the trust store too: the
		// keys given with the install are allowlisted before the fetch.
		if err := h.in.AddTrusted(ctx, req.TrustedPublishers); err != nil {
			return nil, err
		}
	}
	if err := ResolveInstallSource(ctx, h.sources, &req); err != nil {
		return nil, err
	}
	opts := install.InstallOptions{
		AllowTOFU: req.AllowTOFU, Force: req.Force, AcceptCapabilities: req.AcceptCapabilities,
		TrustedPublishers: req.TrustedPublishers, Source: req.Source, DryRun: req.DryRun,
	}
	// An install names its principal only when the caller did; else the
	// installer records its own (system:install).
	if p, ok := NamedPrincipal(ctx); ok {
		opts.Principal = p
	}
	return h.in.Install(ctx, req.Artifact, opts)
}

// List implements Service. It also serves a read-only host.
func (h *Host) List(ctx context.Context, req ListRequest) (*SkillList, error) {
	if err := h.open(); err != nil {
		return nil, err
	}
	v := h.view()
	ls, err := v.List(ctx, install.ListOptions{
		SkillID: req.SkillID, Publisher: req.Publisher, CurrentOnly: req.CurrentOnly,
		QuarantinedOnly: req.QuarantinedOnly, EligibleOnly: req.EligibleOnly,
	})
	if err != nil {
		return nil, err
	}
	if ls == nil {
		ls = []SkillListing{}
	}
	return &SkillList{SkillsRoot: v.Layout().SkillsDir(), Count: len(ls), Entries: ls}, nil
}

// Info implements Service. It also serves a read-only host.
func (h *Host) Info(ctx context.Context, ref SkillRef) (*SkillInfo, error) {
	if err := h.open(); err != nil {
		return nil, err
	}
	return h.view().Info(ctx, ref.SkillID, ref.Version)
}

// Verify implements Service.
func (h *Host) Verify(ctx context.Context, ref SkillRef) (*VerifyResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	return h.in.Verify(ctx, ref.SkillID, ref.Version)
}

// Audit implements Service.
func (h *Host) Audit(ctx context.Context, ref SkillRef) (*AuditResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	return h.in.AuditInstalled(ctx, ref.SkillID, ref.Version)
}

// Enable implements Service.
func (h *Host) Enable(ctx context.Context, req EnableRequest) (*StatusResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	return h.in.Enable(ctx, req.SkillID, req.Version, install.EnableOptions{Override: req.Override, Reason: req.Reason, Principal: PrincipalFrom(ctx)})
}

// ApproveReview implements Service.
func (h *Host) ApproveReview(ctx context.Context, req ReviewRequest) (*StatusResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	return h.in.ApproveReview(ctx, req.SkillID, req.Version, req.Reason, PrincipalFrom(ctx))
}

// Disable implements Service.
func (h *Host) Disable(ctx context.Context, req StatusRequest) (*StatusResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	return h.in.Disable(ctx, req.SkillID, req.Version, req.Reason, PrincipalFrom(ctx))
}

// Quarantine implements Service.
func (h *Host) Quarantine(ctx context.Context, req StatusRequest) (*StatusResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	return h.in.Quarantine(ctx, req.SkillID, req.Version, req.Reason, PrincipalFrom(ctx))
}

// Remove implements Service: the version (every version when req.Version
// is empty) leaves the inventory, its sidecar stops, and with
// PurgeStorage the skill's storage is deleted once no version is left. A
// remove that would leave no version of a skill an enabled hook binding
// runs is refused with ErrSkillReferencedByHook unless req.Force, which
// disables those bindings in the same change (see Host.remove).
func (h *Host) Remove(ctx context.Context, req RemoveRequest) (*RemoveResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	return h.remove(ctx, req.SkillID, req.Version, PrincipalFrom(ctx), req.PurgeStorage, req.Force)
}

// Reaudit implements Service.
func (h *Host) Reaudit(ctx context.Context) (*ReauditReport, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	return h.in.Reaudit(ctx)
}

// Sidecars implements Service: the supervisor's view of every sidecar
// (none without a SidecarPath).
func (h *Host) Sidecars(ctx context.Context) ([]SidecarState, error) {
	if err := h.open(); err != nil {
		return nil, err
	}
	if h.sup == nil {
		return []SidecarState{}, nil
	}
	st := h.sup.States()
	if st == nil {
		st = []SidecarState{}
	}
	return st, nil
}

// open refuses a verb on a closed host.
func (h *Host) open() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	return nil
}
