package supervisor

import (
	"context"
	"fmt"
	"sync/atomic"

	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// boundBroker is the broker as one sidecar sees it: the sidecar serves one
// skill, so a capability call naming another skill is refused before the
// broker sees it (a compromised sidecar cannot act for a neighbour, even
// with a stolen invocation id). A sidecar is started before it is given
// its skill (a spare, see spare.go): its broker is bound to the skill once,
// before LoadSkill; until then it refuses every capability call.
type boundBroker struct {
	skillID atomic.Pointer[string]
	b       sidecarplugin.Broker
}

// newBoundBroker returns the unbound broker of one sidecar, nil when the
// supervisor has no broker.
func newBoundBroker(b sidecarplugin.Broker) *boundBroker {
	if b == nil {
		return nil
	}
	return &boundBroker{b: b}
}

// bind binds bb to skillID; only the first binding counts. A nil bb (no
// broker) ignores it.
func (bb *boundBroker) bind(skillID string) {
	if bb != nil {
		bb.skillID.CompareAndSwap(nil, &skillID)
	}
}

// plugin returns bb as the Broker of the plugin set (a nil interface when
// there is no broker, so that none is served).
func (bb *boundBroker) plugin() sidecarplugin.Broker {
	if bb == nil {
		return nil
	}
	return bb
}

// Call implements sidecarplugin.Broker.
func (bb *boundBroker) Call(ctx context.Context, req sidecarplugin.CapabilityRequest) ([]byte, error) {
	id := bb.skillID.Load()
	if id == nil {
		return nil, &sidecarplugin.CapabilityError{Code: sidecarplugin.CodeDenied,
			Message: fmt.Sprintf("this sidecar serves no skill yet; it may not act for %q", req.SkillID)}
	}
	if req.SkillID != *id {
		return nil, &sidecarplugin.CapabilityError{Code: sidecarplugin.CodeDenied,
			Message: fmt.Sprintf("this sidecar serves skill %s; it may not act for %q", *id, req.SkillID)}
	}
	return bb.b.Call(ctx, req)
}
