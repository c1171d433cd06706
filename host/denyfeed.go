package host

import (
	"context"
	"fmt"

	"github.com/palyra-go/palyra/host/install"
)

// UpdateDenyFeedRequest is a signed deny feed file (docs/deny-feed.md).
type UpdateDenyFeedRequest struct {
	// Feed is the feed file's bytes (a DSSE envelope), at most
	// feed.MaxFileBytes.
	Feed []byte `json:"feed"`
	// TrustedPublishers are allowlisted in the trust store with the feed
	// (its issuer's key, typically), and persisted only when the feed
	// verifies with them.
	TrustedPublishers []TrustedKey `json:"trusted_publishers,omitempty"`
}

// UpdateDenyFeed implements Service: the installer verifies the feed
// against the trust store, checks its serial, installs it atomically in
// the state directory (<state>/feed/deny-feed.json) and re-audits every
// installed version (install.Installer.UpdateDenyFeed). The sidecars of
// the versions it quarantines stop, as with any quarantine. A re-audit
// that could not judge some version returns the result with its error;
// the feed stays installed.
func (h *Host) UpdateDenyFeed(ctx context.Context, req UpdateDenyFeedRequest) (*DenyFeedUpdate, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	if len(req.Feed) == 0 {
		return nil, fmt.Errorf("host: %w: the deny feed is empty", install.ErrInvalidArgument)
	}
	res, err := h.in.UpdateDenyFeed(ctx, req.Feed, PrincipalFrom(ctx), req.TrustedPublishers...)
	if res == nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if len(req.TrustedPublishers) > 0 {
		h.mu.Lock()
		clear(h.verified) // the trust store changed
		h.mu.Unlock()
	}
	h.log.Info("deny feed updated", "issuer", res.Feed.Issuer, "serial", res.Feed.Serial, "previous_serial", res.PreviousSerial,
		"changed", res.Changed, "entries", len(res.Feed.Entries), "quarantined", res.Reaudit.Quarantined, "principal", PrincipalFrom(ctx))
	return res, err
}

// DenyFeed implements Service; a read-only host answers too.
func (h *Host) DenyFeed(ctx context.Context) (*DenyFeedInfo, error) {
	if err := h.open(); err != nil {
		return nil, err
	}
	return h.view().DenyFeed(ctx)
}
