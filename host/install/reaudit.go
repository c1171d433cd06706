package install

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/trust"
)

// ReauditPrefix starts every reason Reaudit records.
const ReauditPrefix = "reaudit: "

// ReauditOutcome is what Reaudit found for one installed version.
type ReauditOutcome struct {
	SkillID string `json:"skill_id"`
	Version string `json:"version"`
	// Before and After are the status before and after ("" when the
	// version had no status row).
	Before inventory.Status `json:"before"`
	After  inventory.Status `json:"after"`
	// Passed is true when the artifact still verifies, audits and fits
	// the profile.
	Passed bool `json:"passed"`
	// Quarantined is true when this run quarantined the version.
	Quarantined bool `json:"quarantined"`
	// Code is the error code of the first failure ("" when passed).
	Code    string   `json:"code,omitempty"`
	Reasons []string `json:"reasons"`
	// Error is set when the version could not be re-audited (its lock was
	// held too long, the database failed); its status is unchanged.
	Error string `json:"error,omitempty"`
}

// ReauditReport is the result of Reaudit.
type ReauditReport struct {
	Checked     int              `json:"checked"`
	Passed      int              `json:"passed"`
	Quarantined int              `json:"quarantined"`
	Outcomes    []ReauditOutcome `json:"outcomes"`
}

// Reaudit re-checks every installed version (not only current ones)
// against the trust store, the audit and the operator profile as they are
// now, and quarantines each version that fails (principal
// PrincipalReaudit, reason "reaudit: ..."): a missing or modified artifact
// (its SHA-256 differs from the install's), a signature or payload that no
// longer verifies, a publisher the trust store no longer trusts (no trust
// on first use), a failed audit check or a policy violation.
//
// Reaudit only ever moves towards quarantine: a version that passes keeps
// its status, whatever it is, and a version already quarantined is left
// alone, with no new event. Each quarantine is committed with its journal
// event and published as skill:quarantined.
//
// A version that cannot be re-audited (its lock held past the lock
// timeout, a database error) is reported in its outcome and in the
// returned error, and Reaudit goes on with the others. ctx ends the run
// between versions.
//
// A trust store refused as tampered (trust.ErrTampered) stops the run
// before any version is judged, with that error: its content cannot be
// trusted either way, so nothing is quarantined on its word (calls and
// installs are refused until it is reviewed with `palyra trust
// accept-changes`).
func (in *Installer) Reaudit(ctx context.Context) (*ReauditReport, error) {
	if err := in.check(ctx); err != nil {
		return nil, err
	}
	if _, err := in.trust.Load(ctx); errors.Is(err, trust.ErrTampered) {
		return nil, fmt.Errorf("install: reaudit: %w", err)
	}
	entries, err := in.db.Skills(ctx, inventory.Filter{})
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	rep := &ReauditReport{Outcomes: []ReauditOutcome{}}
	var errs []error
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("install: reaudit: %w", err)
		}
		o, err := in.reauditOne(ctx, e.SkillID, e.Version)
		if err != nil {
			o.Error = err.Error()
			errs = append(errs, err)
		}
		rep.Checked++
		if o.Passed {
			rep.Passed++
		}
		if o.Quarantined {
			rep.Quarantined++
		}
		rep.Outcomes = append(rep.Outcomes, o)
	}
	return rep, errors.Join(errs...)
}

func (in *Installer) reauditOne(ctx context.Context, id, version string) (ReauditOutcome, error) {
	o := ReauditOutcome{SkillID: id, Version: version, Reasons: []string{}}
	lk, err := in.lock(ctx, id)
	if err != nil {
		return o, err
	}
	defer lk.unlock()
	e, err := in.db.Skill(ctx, id, version)
	if errors.Is(err, inventory.ErrNotFound) {
		return o, nil // removed meanwhile
	}
	if err != nil {
		return o, fmt.Errorf("install: %w", err)
	}
	if e.Status != nil {
		o.Before = e.Status.Status
	}
	o.After = o.Before

	adm, err := in.recheck(ctx, e)
	switch {
	case err != nil && errcode.Of(err) == errcode.Internal && ctx.Err() != nil:
		return o, err
	case err != nil:
		o.Code = errcode.Of(err)
		o.Reasons = append(o.Reasons, ReauditPrefix+err.Error())
	case adm.err != nil:
		o.Code = errcode.Of(adm.err)
		for _, r := range adm.reasons {
			o.Reasons = append(o.Reasons, ReauditPrefix+r)
		}
	default:
		o.Passed = true
		return o, nil
	}
	if o.Before == inventory.StatusQuarantined {
		return o, nil
	}
	reason := boundReason(strings.Join(o.Reasons, "; "))
	err = in.db.Update(ctx, func(tx *inventory.Tx) error {
		return tx.SetStatus(inventory.StatusChange{
			SkillID: id, Version: version, Status: inventory.StatusQuarantined,
			Reason: reason, Principal: PrincipalReaudit,
		})
	})
	if err != nil {
		return o, fmt.Errorf("install: reaudit %s %s: %w", id, version, err)
	}
	o.After, o.Quarantined = inventory.StatusQuarantined, true
	in.publish(events.Event{
		ID: in.lastStatusEventID(ctx, id, version), Kind: events.SkillQuarantined, SkillID: id, Version: version,
		Status: string(inventory.StatusQuarantined), Reason: reason, Principal: PrincipalReaudit, At: in.now(),
	})
	return o, nil
}
