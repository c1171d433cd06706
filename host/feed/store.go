package feed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/fsutil"
)

// storedVersion is the version of the installed-feed file.
const storedVersion = 1

// stored is the installed-feed file: the envelope as given, and when and
// by whom it was installed.
type stored struct {
	Version   int             `json:"version"`
	UpdatedAt time.Time       `json:"updated_at"`
	UpdatedBy string          `json:"updated_by"`
	Envelope  json.RawMessage `json:"envelope"`
}

// Installed is the feed installed in a state directory, verified.
type Installed struct {
	*Signed
	// UpdatedAt and UpdatedBy say when and by which principal it was
	// installed.
	UpdatedAt time.Time
	UpdatedBy string
	// Path is the installed-feed file.
	Path string
}

// Load reads the installed feed at path and verifies it against store
// (see Signed.Verify). A missing file is (nil, nil): no feed installed. A
// file that does not parse, or whose feed no longer verifies, is an error
// (ErrInvalidFeed, ErrUntrustedFeed): fail closed.
func Load(ctx context.Context, path string, store *trust.Store) (*Installed, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("feed: load: %w", err)
	}
	in, err := readInstalled(path)
	if err != nil || in == nil {
		return nil, err
	}
	if err := in.Verify(store); err != nil {
		return nil, fmt.Errorf("feed: the installed feed %s: %w", path, err)
	}
	return in, nil
}

// ReadUnverified reads the installed feed at path without checking its
// signatures, to describe a feed that Load refused; nothing it returns
// may be trusted. A missing file is (nil, nil).
func ReadUnverified(path string) (*Installed, error) { return readInstalled(path) }

// readInstalled reads and parses the installed-feed file without checking
// its signatures; a missing file is (nil, nil).
func readInstalled(path string) (*Installed, error) {
	data, err := fsutil.ReadLimited(path, 2*MaxFileBytes+4096, ErrInvalidFeed, "twice MaxFileBytes")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("feed: read %s: %w", path, err)
	}
	var st stored
	if err := strictDecode(data, &st); err != nil || st.Version != storedVersion {
		return nil, fmt.Errorf("%w: %s is not a version %d installed feed", ErrInvalidFeed, path, storedVersion)
	}
	s, err := Parse(st.Envelope)
	if err != nil {
		return nil, fmt.Errorf("feed: the installed feed %s: %w", path, err)
	}
	return &Installed{Signed: s, UpdatedAt: st.UpdatedAt, UpdatedBy: st.UpdatedBy, Path: path}, nil
}

// UpdateResult is the outcome of Update.
type UpdateResult struct {
	// Feed is the feed installed now.
	Feed *Installed
	// PreviousSerial is the serial of the feed it replaced (0: none).
	PreviousSerial uint64
	// Changed is false when the same feed was installed already.
	Changed bool
}

// lockWait bounds the wait for another writer of the feed.
const lockWait = 30 * time.Second

// Update installs the feed file data at path, after checking it: it must
// parse (Parse), verify against store (Signed.Verify: fail closed on an
// unknown issuer or key), and be newer than the installed feed (a higher
// serial; the same payload again changes nothing; an installed feed that
// does not parse any more is replaced). The write is atomic, under the
// lock file path+".lock"; principal and now are recorded with it.
func Update(ctx context.Context, path string, data []byte, store *trust.Store, principal string, now time.Time) (*UpdateResult, error) {
	s, err := Parse(data)
	if err != nil {
		return nil, err
	}
	if err := s.Verify(store); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("feed: %w", err)
	}
	lk, err := fsutil.LockExclusive(ctx, path+".lock", lockWait)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFeedLocked, err)
	}
	defer lk.Close()

	res := &UpdateResult{}
	cur, err := readInstalled(path)
	switch {
	case errors.Is(err, ErrInvalidFeed):
		// A corrupt installed feed is replaced by a verified one.
	case err != nil:
		return nil, err
	case cur != nil:
		res.PreviousSerial = cur.Feed.Serial
		if s.Feed.Serial < cur.Feed.Serial {
			return nil, fmt.Errorf("%w: serial %d is older than the installed feed's serial %d (issued %s by %s)",
				ErrFeedNotNewer, s.Feed.Serial, cur.Feed.Serial, cur.Feed.IssuedAt.Format(time.RFC3339), cur.Feed.Issuer)
		}
		if s.Feed.Serial == cur.Feed.Serial {
			if s.Digest() != cur.Digest() {
				return nil, fmt.Errorf("%w: serial %d is the installed feed's, with different content (an issuer increases the serial with every feed)", ErrFeedNotNewer, s.Feed.Serial)
			}
			cur.KeyID = s.KeyID
			res.Feed = cur
			return res, nil
		}
	}
	env, err := json.Marshal(s.Envelope)
	if err != nil {
		return nil, fmt.Errorf("feed: encode: %w", err)
	}
	st := stored{Version: storedVersion, UpdatedAt: now.UTC(), UpdatedBy: principal, Envelope: env}
	out, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("feed: encode: %w", err)
	}
	if err := fsutil.WriteAtomic(path, append(out, '\n'), 0o600); err != nil {
		return nil, fmt.Errorf("feed: write %s: %w", path, err)
	}
	res.Feed = &Installed{Signed: s, UpdatedAt: st.UpdatedAt, UpdatedBy: principal, Path: path}
	res.Changed = true
	return res, nil
}
