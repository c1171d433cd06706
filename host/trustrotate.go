package host

import (
	"context"
	"fmt"

	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/trust"
)

// RotateTrustRequest is a publisher's signed key rotation statement (the
// file `palyra keys rotate` writes; trust/ROTATION.md).
type RotateTrustRequest struct {
	// Statement is the statement's bytes, at most trust.MaxRotationSize.
	Statement []byte `json:"statement"`
}

// RotateTrustResult is what applying a rotation statement did.
type RotateTrustResult struct {
	// Publisher is the publisher whose key moved.
	Publisher string `json:"publisher"`
	// Outcome is trust.RotationOutcome: allowlist_key_replaced,
	// tofu_pin_moved or already_applied.
	Outcome string `json:"outcome"`
	// StatementSHA256 is the statement's digest (trust.Rotation.Digest).
	StatementSHA256 string `json:"statement_sha256"`
}

// RotateTrust implements Service: it parses the statement strictly
// (trust.ParseRotation), then applies it to the host's trust store under
// the store's lock (trust.File.ApplyRotation: both signatures, replay
// protection through the rotation log, clock skew). The cached trust
// verdicts are dropped, so the next call re-verifies every artifact
// against the store as it is now.
func (h *Host) RotateTrust(ctx context.Context, req RotateTrustRequest) (*RotateTrustResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	if len(req.Statement) == 0 {
		return nil, fmt.Errorf("host: %w: the rotation statement is empty", install.ErrInvalidArgument)
	}
	rot, err := trust.ParseRotation(req.Statement)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	outcome, err := h.trust.ApplyRotation(ctx, rot)
	if err != nil {
		return nil, fmt.Errorf("host: rotate %s: %w", rot.Publisher, err)
	}
	h.mu.Lock()
	clear(h.verified)
	h.mu.Unlock()
	h.log.Info("trust store rotation applied", "publisher", rot.Publisher, "outcome", string(outcome), "statement_sha256", rot.Digest(), "principal", PrincipalFrom(ctx))
	return &RotateTrustResult{Publisher: rot.Publisher, Outcome: string(outcome), StatementSHA256: rot.Digest()}, nil
}
