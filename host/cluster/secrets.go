package cluster

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/vault"
)

// SecretsPollInterval is how often a node looks at its vault file for
// changes to publish (`palyra secrets set` writes the file from another
// process, so the node watches the file rather than a call).
const SecretsPollInterval = 250 * time.Millisecond

// secretRecord is one entry of SecretsBucket: a vault entry still sealed,
// with the key check of the vault that sealed it, and the node that
// published it (for logs).
type secretRecord struct {
	Name   string       `json:"name"`
	Node   string       `json:"node"`
	Sealed vault.Sealed `json:"sealed"`
}

// known is the bucket's last word on one secret, as this node's watcher
// saw it.
type known struct {
	sealed   vault.Sealed
	revision uint64
}

// secretSync replicates a node's vault through SecretsBucket: the vault's
// ciphertext travels, each node's key stays with the node.
//
// Out: every SecretsPollInterval the node reads its vault file (when its
// size or time changed) and publishes each entry that changed since the
// last look and is not what the bucket already holds (so an entry it
// imported is not sent back), and deletes from the bucket each entry that
// went away locally, if the bucket still holds what this node had. At
// start it publishes the local entries the bucket lacks (kv.Create), and
// never a deletion: what changed while a node was down is not known.
// Node-local entries (vault.Name.NodeLocal: this node's own state, such as
// its trust store's "sealed once" marker) are never published or imported.
//
// In: the node watches the bucket and imports each entry into its own
// vault with vault.Import, which stores it only when the node's key opens
// it. A node with another key (or none) leaves it out: its vault has no
// such entry, so the skill reports the secret missing through the usual
// path (install's missing_secrets, secret_not_found at a call), never a
// crypto error; the node logs a warning naming the secret and the node it
// came from. A deletion in the bucket removes the local entry only if it
// is the value deleted.
type secretSync struct {
	kv   jetstream.KeyValue
	v    *vault.Vault
	node string
	log  hclog.Logger

	mu      sync.Mutex
	last    map[vault.Name]known  // the bucket's current entries
	refused map[vault.Name]string // entries this node's key cannot open: why
}

// startSecrets starts replicating the node's vault (see secretSync).
func (n *Node) startSecrets(ctx context.Context) error {
	kv := n.link.SecretsKV()
	if kv == nil || n.host.Vault() == nil {
		return nil
	}
	s := &secretSync{kv: kv, v: n.host.Vault(), node: n.Name(), log: n.log.Named("secrets"),
		last: map[vault.Name]known{}, refused: map[vault.Name]string{}}
	n.secrets = s
	prev, err := s.v.SealedEntries(ctx)
	prev = replicated(prev)
	if err != nil {
		return fmt.Errorf("cluster: secrets: %w", err)
	}
	// Publishing and watching are retried within the link's
	// ConnectTimeout, as the events consumer's creation is: a node
	// started right after another died meets the bucket's raft group
	// electing a leader (JetStream "not current with the meta leader").
	budget := n.link.cfg.ConnectTimeout
	for name, sealed := range prev {
		err := retryUnavailable(ctx, budget, func(c context.Context) error {
			_, err := kv.Create(c, secretKey(name), s.encode(name, sealed))
			if errors.Is(err, jetstream.ErrKeyExists) {
				return nil
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("cluster: publish secret %s: %w", name, Unavailable(err))
		}
	}
	var w jetstream.KeyWatcher
	err = retryUnavailable(ctx, budget, func(context.Context) (err error) {
		// The watcher lives as long as the node (n.ctx); each try is
		// bounded by the JetStream API's own timeout.
		w, err = kv.WatchAll(n.ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("cluster: watch %s: %w", SecretsBucket, Unavailable(err))
	}
	n.goLoop(func(ctx context.Context) {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e != nil {
					s.apply(ctx, e)
				}
			}
		}
	})
	n.goLoop(func(ctx context.Context) { s.poll(ctx, prev) })
	return nil
}

// replicated returns the entries of m a cluster replicates: all but the
// node-local ones (vault.Name.NodeLocal), such as the trust store's
// "sealed once" marker, which says something of this node's own files.
func replicated(m map[vault.Name]vault.Sealed) map[vault.Name]vault.Sealed {
	for name := range m {
		if name.NodeLocal() {
			delete(m, name)
		}
	}
	return m
}

// secretKey is the bucket key of a secret: its name in lower-case hex.
func secretKey(n vault.Name) string { return hex.EncodeToString([]byte(n.String())) }

func (s *secretSync) encode(n vault.Name, sealed vault.Sealed) []byte {
	b, _ := json.Marshal(secretRecord{Name: n.String(), Node: s.node, Sealed: sealed})
	return b
}

// apply imports one update of the bucket into the local vault.
func (s *secretSync) apply(ctx context.Context, e jetstream.KeyValueEntry) {
	raw, err := hex.DecodeString(e.Key())
	if err != nil {
		return
	}
	name, err := vault.ParseName(string(raw))
	if err != nil {
		s.log.Warn("ignoring a secret entry with an invalid name", "key", e.Key())
		return
	}
	if name.NodeLocal() {
		return // another node's own state (a node of an older build published it)
	}
	if e.Operation() != jetstream.KeyValuePut {
		s.mu.Lock()
		prev, had := s.last[name]
		delete(s.last, name)
		delete(s.refused, name)
		s.mu.Unlock()
		if had {
			if _, err := s.v.DeleteSealed(ctx, name, prev.sealed); err != nil && ctx.Err() == nil {
				s.log.Error("removing a secret deleted in the cluster", "secret", name.String(), "code", errcode.Of(err), "error", err)
			}
		}
		return
	}
	var rec secretRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil || rec.Name != name.String() {
		s.log.Warn("ignoring a malformed secret entry", "secret", name.String())
		return
	}
	s.mu.Lock()
	s.last[name] = known{sealed: rec.Sealed, revision: e.Revision()}
	s.mu.Unlock()
	_, err = s.v.Import(ctx, name, rec.Sealed)
	s.mu.Lock()
	delete(s.refused, name)
	if err != nil && ctx.Err() == nil {
		s.refused[name] = string(errcode.Of(err))
	}
	s.mu.Unlock()
	switch {
	case err == nil || ctx.Err() != nil:
	case errors.Is(err, vault.ErrCorrupt):
		s.log.Error("a replicated secret does not authenticate under its name; not stored", "secret", name.String(), "from", rec.Node)
	default:
		s.log.Warn("a replicated secret is sealed under a key this node does not have; skills using it report it missing here",
			"secret", name.String(), "from", rec.Node, "code", errcode.Of(err))
	}
}

// poll publishes the vault file's changes until ctx ends.
func (s *secretSync) poll(ctx context.Context, prev map[vault.Name]vault.Sealed) {
	t := time.NewTicker(SecretsPollInterval)
	defer t.Stop()
	var seen os.FileInfo
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fi, err := os.Stat(s.v.Path())
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if fi != nil && seen != nil && fi.Size() == seen.Size() && fi.ModTime().Equal(seen.ModTime()) {
			continue
		}
		cur, err := s.v.SealedEntries(ctx)
		cur = replicated(cur)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("reading the vault", "code", errcode.Of(err), "error", err)
			}
			continue
		}
		seen = fi
		if err := s.publish(ctx, prev, cur); err != nil {
			if ctx.Err() == nil {
				s.log.Warn("publishing vault changes (retried at the next change)", "error", err)
				seen = nil // look again
			}
			continue
		}
		prev = cur
	}
}

// publish sends the local changes from prev to cur to the bucket.
func (s *secretSync) publish(ctx context.Context, prev, cur map[vault.Name]vault.Sealed) error {
	var errs []error
	for name, sealed := range cur {
		if p, ok := prev[name]; ok && p.Same(sealed) {
			continue
		}
		s.mu.Lock()
		k, ok := s.last[name]
		s.mu.Unlock()
		if ok && k.sealed.Same(sealed) {
			continue // imported from the bucket, not a local change
		}
		if _, err := s.kv.Put(ctx, secretKey(name), s.encode(name, sealed)); err != nil {
			errs = append(errs, fmt.Errorf("publish %s: %w", name, Unavailable(err)))
			continue
		}
		s.log.Info("published a secret", "secret", name.String())
	}
	for name, sealed := range prev {
		if _, ok := cur[name]; ok {
			continue
		}
		s.mu.Lock()
		k, ok := s.last[name]
		s.mu.Unlock()
		if !ok || !k.sealed.Same(sealed) {
			continue // the bucket holds another value (or none): not ours to delete
		}
		err := s.kv.Delete(ctx, secretKey(name), jetstream.LastRevision(k.revision))
		if err != nil && !isRevisionConflict(err) {
			errs = append(errs, fmt.Errorf("delete %s: %w", name, Unavailable(err)))
			continue
		}
		s.log.Info("deleted a secret", "secret", name.String())
	}
	return errors.Join(errs...)
}

// refusedSecrets returns the replicated secrets this node's key cannot
// open, with the error code of why.
func (s *secretSync) refusedSecrets() map[vault.Name]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[vault.Name]string, len(s.refused))
	for k, v := range s.refused {
		out[k] = v
	}
	return out
}
