package trust

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/palyra-go/palyra/internal/fsutil"
)

// RotationLogSuffix is appended to the store path to name the rotation log,
// the side file in which File.ApplyRotation records, per publisher, the
// newest rotation statement it applied. Palyra's store format rejects unknown
// keys, so this record cannot live in the store itself.
const RotationLogSuffix = ".rotations.json"

// MaxRotationClockSkew is how far in the future File.ApplyRotation accepts
// a statement's issued_at. A statement dated later would raise the
// publisher's replay watermark past every honest statement made until then.
const MaxRotationClockSkew = 24 * time.Hour

// rotationRecord is one entry of the rotation log.
type rotationRecord struct {
	IssuedAtUnixMs  int64  `json:"issued_at_unix_ms"`
	StatementSHA256 string `json:"statement_sha256"`
}

// rotationLogJSON is the rotation log file.
type rotationLogJSON struct {
	SchemaVersion int                       `json:"schema_version"`
	Publishers    map[string]rotationRecord `json:"publishers"`
}

// RotationLogPath returns the path of the rotation log of f.
func (f *File) RotationLogPath() string { return f.path + RotationLogSuffix }

// ApplyRotation applies r to the store like Store.ApplyRotation, under the
// store's lock, and refuses replays: it keeps, in the rotation log next to
// the store (RotationLogPath), the issued_at and digest of the newest
// statement applied for each publisher, and rejects with ErrRotationReplayed
// a different statement for that publisher that is not strictly newer.
// Re-applying the recorded statement itself is allowed (and, once it is in
// effect, reports RotationAlreadyApplied). A statement dated more than
// MaxRotationClockSkew in the future is rejected with ErrInvalidRotation.
//
// The log is written before the store, both atomically, so a crash between
// the two leaves a statement recorded but not yet in effect, and applying it
// again completes it. ctx governs the wait for the lock.
func (f *File) ApplyRotation(ctx context.Context, r *Rotation) (RotationOutcome, error) {
	if err := r.Verify(); err != nil {
		return "", err
	}
	if limit := time.Now().Add(MaxRotationClockSkew); r.IssuedAt.After(limit) {
		return "", fmt.Errorf("%w: issued_at %s is more than %s in the future", ErrInvalidRotation, r.IssuedAt.UTC().Format(time.RFC3339), MaxRotationClockSkew)
	}
	var outcome RotationOutcome
	err := f.withLock(ctx, func() error {
		s, _, _, err := f.readVerified(ctx, true)
		if err != nil {
			return err
		}
		prev := s.Clone()
		log, err := readRotationLog(f.RotationLogPath())
		if err != nil {
			return err
		}
		ms, digest := r.IssuedAt.UnixMilli(), r.Digest()
		rec, seen := log[r.Publisher]
		if seen && rec.StatementSHA256 != digest && ms <= rec.IssuedAtUnixMs {
			return fmt.Errorf("%w: statement %s for publisher %s was issued at %d, but statement %s issued at %d has already been applied",
				ErrRotationReplayed, digest, quote(r.Publisher), ms, rec.StatementSHA256, rec.IssuedAtUnixMs)
		}
		outcome, err = s.ApplyRotation(r)
		if err != nil {
			return err
		}
		if !seen || ms > rec.IssuedAtUnixMs {
			log[r.Publisher] = rotationRecord{IssuedAtUnixMs: ms, StatementSHA256: digest}
			data, err := marshalPretty(rotationLogJSON{SchemaVersion: 1, Publishers: log})
			if err != nil {
				return fmt.Errorf("trust: encode rotation log: %w", err)
			}
			if err := writeAtomic(f.RotationLogPath(), data); err != nil {
				return err
			}
		}
		if outcome == RotationAlreadyApplied {
			return nil
		}
		data, err := s.Marshal()
		if err != nil {
			return fmt.Errorf("trust: encode store: %w", err)
		}
		return f.commit(ctx, prev, s, data)
	})
	if err != nil {
		return "", err
	}
	return outcome, nil
}

// readRotationLog reads the rotation log; a missing or all-white-space file
// is an empty log. Errors wrap ErrInvalidStore.
func readRotationLog(path string) (map[string]rotationRecord, error) {
	log := make(map[string]rotationRecord)
	data, err := fsutil.ReadLimited(path, MaxStoreSize, ErrInvalidStore, "MaxStoreSize")
	if errors.Is(err, fs.ErrNotExist) {
		return log, nil
	}
	if err != nil {
		return nil, err
	}
	if err := parseRotationLog(data, log); err != nil {
		return nil, fmt.Errorf("%w: rotation log %s: %w", ErrInvalidStore, path, err)
	}
	return log, nil
}

func parseRotationLog(data []byte, log map[string]rotationRecord) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	d := newStrictDecoder(data)
	var schema int64 = -1
	err := d.object("rotation log", func(key string) error {
		switch key {
		case "schema_version":
			var err error
			schema, err = d.int64(key)
			return err
		case "publishers":
			return d.object(key, func(pub string) error {
				if p, err := normalizePublisher(pub); err != nil || p != pub {
					return fmt.Errorf("invalid publisher %s", quote(pub))
				}
				var rec rotationRecord
				seen := map[string]bool{}
				err := d.object("publishers."+pub, func(field string) error {
					seen[field] = true
					var err error
					switch field {
					case "issued_at_unix_ms":
						rec.IssuedAtUnixMs, err = d.int64(field)
					case "statement_sha256":
						rec.StatementSHA256, err = d.string(field)
					default:
						err = fmt.Errorf("unknown key %s", quote(field))
					}
					return err
				})
				if err != nil {
					return err
				}
				if !seen["issued_at_unix_ms"] || !seen["statement_sha256"] {
					return fmt.Errorf("publishers.%s: missing issued_at_unix_ms or statement_sha256", pub)
				}
				log[pub] = rec
				return nil
			})
		default:
			return fmt.Errorf("unknown key %s", quote(key))
		}
	})
	if err != nil {
		return err
	}
	if schema != 1 {
		return fmt.Errorf("schema_version must be 1")
	}
	return d.end()
}
