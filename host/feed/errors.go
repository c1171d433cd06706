package feed

import "github.com/palyra-go/palyra/host/errcode"

// Sentinels. Every error returned by this package wraps exactly one of
// them (or a trust-store error), so callers use errors.Is and errcode.Of,
// never the message text.
var (
	// ErrInvalidFeed: the feed file is too large, is not a DSSE envelope of
	// a version 1 deny feed, has an unknown or missing field, too many
	// entries, a bad entry, or a duplicate entry.
	ErrInvalidFeed = errcode.New("invalid_deny_feed", "invalid deny feed")
	// ErrUntrustedFeed: no signature of the feed verifies with a key the
	// trust store allowlists for the feed's issuer (an unknown issuer, an
	// unknown key, a TOFU-pinned key or a bad signature). Fail closed:
	// nothing of the feed is used.
	ErrUntrustedFeed = errcode.New("untrusted_deny_feed", "deny feed not signed by a trusted key")
	// ErrFeedNotNewer: the feed's serial is lower than the installed
	// feed's, or equal with different content: an older feed never
	// replaces a newer one.
	ErrFeedNotNewer = errcode.New("deny_feed_not_newer", "deny feed is not newer than the installed one")
	// ErrFeedLocked: another process held the feed's lock past the wait.
	ErrFeedLocked = errcode.New("deny_feed_locked", "deny feed is locked")
)
