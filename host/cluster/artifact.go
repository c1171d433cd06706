package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
)

// ErrArtifactMissing is an install op whose artifact is not in
// ArtifactStore (or is larger than an artifact may be): the node refuses
// the op.
var ErrArtifactMissing = errcode.New("cluster_artifact_missing", "the op's artifact is not in the cluster's artifact store")

// objectDigest is the object store's digest of content whose sha256 is sum.
func objectDigest(sum []byte) string {
	return "SHA-256=" + base64.URLEncoding.EncodeToString(sum)
}

// putArtifact stores data in ArtifactStore under its sha256 (lower-case
// hex), unless an object of that name with the same digest is there
// already, and returns the name. An object of that name with other bytes
// (a rogue writer's) is replaced. A failure to reach a quorum is
// ErrClusterUnavailable.
func (n *Node) putArtifact(ctx context.Context, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:])
	store := n.link.artifacts
	var stored bool
	if err := retryUnavailable(ctx, writeBudget, func(c context.Context) error {
		info, err := store.GetInfo(c, name)
		switch {
		case err == nil && !info.Deleted && info.Digest == objectDigest(sum[:]) && info.Size == uint64(len(data)):
			stored = true
			return nil
		case err != nil && !errors.Is(err, jetstream.ErrObjectNotFound):
			return err
		}
		return nil
	}); err != nil {
		return "", fmt.Errorf("cluster: look up artifact %s: %w", name, Unavailable(err))
	}
	if stored {
		return name, nil
	}
	// One put, bounded by the budget and a second per MiB (a put retried
	// after a partial one starts over under the same name).
	pctx, cancel := context.WithTimeout(ctx, writeBudget+time.Duration(len(data)>>20)*time.Second)
	defer cancel()
	if _, err := store.Put(pctx, jetstream.ObjectMeta{Name: name, Description: "palyra skill artifact"}, bytes.NewReader(data)); err != nil {
		return "", fmt.Errorf("cluster: store artifact %s: %w", name, Unavailable(err))
	}
	return name, nil
}

// getArtifact reads the artifact named sum (lower-case hex sha256) from
// ArtifactStore and checks its bytes hash to sum: other bytes are
// artifact.ErrPayloadHashMismatch, a missing object ErrArtifactMissing. A
// failure to reach the store is ErrClusterUnavailable (the caller retries;
// it is no refusal).
func (n *Node) getArtifact(ctx context.Context, sum string) ([]byte, error) {
	want, err := hex.DecodeString(sum)
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("%w: the op names artifact %q, not a sha256", artifact.ErrPayloadHashMismatch, sum)
	}
	store := n.link.artifacts
	info, err := store.GetInfo(ctx, sum)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound) || (err == nil && info.Deleted):
		return nil, fmt.Errorf("%w: %s", ErrArtifactMissing, sum)
	case err != nil:
		return nil, fmt.Errorf("cluster: look up artifact %s: %w", sum, Unavailable(err))
	case info.Size > artifact.MaxArtifactBytes:
		return nil, fmt.Errorf("%w: object %s is %d bytes, the limit is %d bytes (MaxArtifactBytes)",
			ErrArtifactMissing, sum, info.Size, artifact.MaxArtifactBytes)
	}
	data, err := store.GetBytes(ctx, sum)
	if err != nil {
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return nil, fmt.Errorf("%w: %s", ErrArtifactMissing, sum)
		}
		if errors.Is(err, jetstream.ErrDigestMismatch) {
			return nil, fmt.Errorf("%w: object %s: %v", artifact.ErrPayloadHashMismatch, sum, err)
		}
		// Any other failure to read (a chunk that did not come in time)
		// is the store's, not the op's: the caller tries again.
		return nil, fmt.Errorf("%w: read artifact %s: %v", ErrClusterUnavailable, sum, err)
	}
	got := sha256.Sum256(data)
	if !bytes.Equal(got[:], want) {
		return nil, fmt.Errorf("%w: object %s holds bytes whose sha256 is %s", artifact.ErrPayloadHashMismatch, sum, hex.EncodeToString(got[:]))
	}
	return data, nil
}
