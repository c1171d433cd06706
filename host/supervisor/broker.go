package supervisor

import (
	"context"
	"fmt"

	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

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
