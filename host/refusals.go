package host

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/trust"
)

// EventCallRefused is the journal's record of calls the gate refused for a
// reason an operator acts on: the version's status (quarantined, disabled,
// no status), its crash loop, its trust or integrity, the operator's
// policy, or a run hook's block. Palyra journals such denials; so do we,
// coalesced (see refusalInterval). Its reason is "<code>: <message>"; its
// details are {"code", "tool_id", "suppressed"}, suppressed counting the
// same refusals (skill, version, code) not journaled since the last one.
const EventCallRefused inventory.EventKind = "skill.call_refused"

// refusalInterval is how often one refusal (skill, version, code) is
// journaled at most: a client that calls a quarantined skill in a loop
// writes one event a minute, with the count of the others, not one per
// call.
const refusalInterval = time.Minute

// maxRefusalKeys bounds the refusals remembered for coalescing; past it,
// the ones older than refusalInterval are forgotten (and, if that is not
// enough, all of them: the next refusal of each is journaled again).
const maxRefusalKeys = 4096

// refusalKey is what coalesces: one code of one version.
type refusalKey struct{ skillID, version, code string }

// refusalMark is when a refusal was last journaled and how many since
// were not.
type refusalMark struct {
	at         time.Time
	suppressed int
}

// refusals coalesces the journal's call_refused events.
type refusals struct {
	mu   sync.Mutex
	last map[refusalKey]*refusalMark
}

// journaledRefusal reports whether err is a refusal the journal records.
// A caller's own mistake (bad input, an unknown tool, a missing skill),
// an approval's state (journaled by the approvals), a timeout or a
// failure of the tool itself is not.
func journaledRefusal(err error) bool {
	for _, target := range []error{
		ErrQuarantined, ErrDisabled, ErrNoStatus, ErrCrashLooping,
		trust.ErrUntrustedPublisher, trust.ErrTrustedPublisherKeyMismatch, trust.ErrTOFUKeyMismatch, trust.ErrTampered,
		install.ErrInstalledArtifact, artifact.ErrPayloadHashMismatch, artifact.ErrSignatureVerification,
		ErrPolicyViolation, ErrBlockedByHook,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// take decides whether a refusal of k at now is journaled; when it is, it
// returns how many of the same were not since the last one.
func (r *refusals) take(k refusalKey, now time.Time) (journal bool, suppressed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = map[refusalKey]*refusalMark{}
	}
	if m := r.last[k]; m != nil {
		if now.Sub(m.at) < refusalInterval {
			m.suppressed++
			return false, 0
		}
		suppressed = m.suppressed
	}
	if len(r.last) >= maxRefusalKeys {
		for key, m := range r.last {
			if now.Sub(m.at) >= refusalInterval {
				delete(r.last, key)
			}
		}
		if len(r.last) >= maxRefusalKeys {
			clear(r.last)
		}
	}
	r.last[k] = &refusalMark{at: now}
	return true, suppressed
}

// journalRefusal records a call of toolID of skillID version that the
// gate refused with err, when err is a refusal the journal keeps and the
// coalescing lets it through. A failure to write is logged: the call's
// own answer is the refusal either way.
func (h *Host) journalRefusal(ctx context.Context, skillID, version, toolID string, err error) {
	if h.in == nil || version == "" || !journaledRefusal(err) {
		return
	}
	code := errcode.Of(err)
	ok, suppressed := h.refused.take(refusalKey{skillID, version, code}, time.Now())
	if !ok {
		return
	}
	details, jerr := json.Marshal(map[string]any{"code": code, "tool_id": toolID, "suppressed": suppressed})
	if jerr != nil {
		return
	}
	principal := PrincipalFrom(ctx)
	ev := inventory.Event{
		Kind: EventCallRefused, SkillID: skillID, Version: version,
		Reason:    cut(code+": "+errcode.Readable(err), inventory.MaxReasonBytes),
		Principal: principal, Details: details,
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	werr := h.in.Inventory().Update(wctx, func(tx *inventory.Tx) error {
		_, err := tx.AppendEvent(ev)
		return err
	})
	if werr != nil {
		h.log.Warn("could not journal a refused call", "skill_id", skillID, "skill_version", version, "tool_id", toolID, "code", code, "error", werr)
	}
}
