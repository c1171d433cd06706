package install

import (
	"context"
	"fmt"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/feed"
)

// FeedInfo describes the installed deny feed, for `palyra feed show` and
// the result of an update.
type FeedInfo struct {
	// Installed is false when no feed is installed (the other fields are
	// then empty, but Path).
	Installed bool `json:"installed"`
	// Path is the installed feed's file.
	Path string `json:"path"`
	// Issuer, Serial and IssuedAt are the feed's own.
	Issuer   string    `json:"issuer,omitempty"`
	Serial   uint64    `json:"serial,omitempty"`
	IssuedAt time.Time `json:"issued_at,omitzero"`
	// KeyID is the issuer key (hex Ed25519) whose signature verified.
	KeyID string `json:"key_id,omitempty"`
	// Digest is the SHA-256 of the signed payload.
	Digest string `json:"digest,omitempty"`
	// UpdatedAt and UpdatedBy say when and by which principal the feed was
	// installed.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	UpdatedBy string    `json:"updated_by,omitempty"`
	// Entries are the feed's entries, in its order.
	Entries []feed.Entry `json:"entries"`
	// Error is set when a feed is installed but cannot be used (it is
	// corrupt, or the trust store no longer allowlists its key): every
	// audit fails its vulnerability_feed_hook until a trusted feed is
	// installed.
	Error string `json:"error,omitempty"`
	// Code is Error's code.
	Code string `json:"code,omitempty"`
}

// FeedUpdateResult is the outcome of UpdateDenyFeed.
type FeedUpdateResult struct {
	// Feed is the feed installed now.
	Feed FeedInfo `json:"feed"`
	// PreviousSerial is the serial of the feed replaced (0: none).
	PreviousSerial uint64 `json:"previous_serial"`
	// Changed is false when the same feed was installed already.
	Changed bool `json:"changed"`
	// Reaudit is the re-audit of every installed version that followed
	// the update: each version the new feed denies is quarantined there,
	// with the entry's reason and reference.
	Reaudit *ReauditReport `json:"reaudit"`
}

func infoOf(in *feed.Installed) FeedInfo {
	return FeedInfo{
		Installed: true, Path: in.Path,
		Issuer: in.Feed.Issuer, Serial: in.Feed.Serial, IssuedAt: in.Feed.IssuedAt.UTC(),
		KeyID: in.KeyID, Digest: in.Digest(),
		UpdatedAt: in.UpdatedAt.UTC(), UpdatedBy: in.UpdatedBy,
		Entries: append([]feed.Entry{}, in.Feed.Entries...),
	}
}

// DenyFeed describes the installed deny feed, verified against the trust
// store as it is now. No feed is Installed false; a feed that cannot be
// used is described with Error and Code (and what can still be read of
// it), not returned as an error. A trust store that cannot be read is an
// error.
func (in *Installer) DenyFeed(ctx context.Context) (*FeedInfo, error) {
	if err := in.check(ctx); err != nil {
		return nil, err
	}
	store, err := in.trust.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	path := in.layout.DenyFeed()
	f, err := feed.Load(ctx, path, store)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("install: %w", err)
	case err != nil:
		info := FeedInfo{Installed: true, Path: path, Entries: []feed.Entry{}, Error: err.Error(), Code: errcode.Of(err)}
		if raw, rerr := feed.ReadUnverified(path); rerr == nil && raw != nil {
			ri := infoOf(raw)
			ri.KeyID, ri.Error, ri.Code = "", info.Error, info.Code
			return &ri, nil
		}
		return &info, nil
	case f == nil:
		return &FeedInfo{Path: path, Entries: []feed.Entry{}}, nil
	}
	info := infoOf(f)
	return &info, nil
}

// UpdateDenyFeed installs the signed deny feed data (see host/feed): it
// must verify against the trust store (a key the store allowlists for the
// feed's issuer; no trust on first use) and be newer than the installed
// feed. trusted are publisher keys the operator allowlists with the feed
// (the CLI's --trusted-publisher ISSUER=HEX): the feed is verified against
// the store with them, and they are persisted in the store only once the
// feed verifies with them. principal "" means PrincipalLocal. It then re-audits every
// installed version (Reaudit), so that each version the feed denies is
// quarantined with the entry's reason and reference, journaled. The feed
// stays installed when the re-audit reports an error (the next re-audit,
// and every install, consult it); that error is returned with the result.
func (in *Installer) UpdateDenyFeed(ctx context.Context, data []byte, principal string, trusted ...TrustedKey) (*FeedUpdateResult, error) {
	if err := in.check(ctx); err != nil {
		return nil, err
	}
	if principal == "" {
		principal = PrincipalLocal
	}
	store, err := in.trust.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	if len(trusted) > 0 {
		store = store.Clone()
		for _, k := range trusted {
			if err := store.AddTrusted(k.Publisher, k.PublicKeyHex); err != nil {
				return nil, fmt.Errorf("install: %w", err)
			}
		}
		// Verified before anything is written: a feed that does not
		// verify even with these keys allowlists nothing.
		s, err := feed.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("install: %w", err)
		}
		if err := s.Verify(store); err != nil {
			return nil, fmt.Errorf("install: %w", err)
		}
		if err := in.addTrusted(ctx, trusted); err != nil {
			return nil, err
		}
	}
	up, err := feed.Update(ctx, in.layout.DenyFeed(), data, store, principal, in.now())
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	res := &FeedUpdateResult{Feed: infoOf(up.Feed), PreviousSerial: up.PreviousSerial, Changed: up.Changed}
	rep, err := in.Reaudit(ctx)
	res.Reaudit = rep
	if rep == nil {
		res.Reaudit = &ReauditReport{Outcomes: []ReauditOutcome{}}
	}
	return res, err
}
