package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/palyra-go/palyra/host/storage"
)

// Link is a node's connection to its cluster: the embedded nats-server
// when there is one, the NATS connection, JetStream, and the cluster's
// streams and buckets, created (or found) at Dial. A Link is opened before
// the node's host (the host's storage lives in the link's bucket) and
// closed after it.
type Link struct {
	cfg Config
	log hclog.Logger
	srv *server.Server
	nc  *nats.Conn
	js  jetstream.JetStream

	ops       jetstream.Stream
	events    jetstream.Stream
	artifacts jetstream.ObjectStore
	storage   jetstream.KeyValue
	secrets   jetstream.KeyValue

	skillStorage *KVStorage
}

// Dial joins the cluster cfg describes: it starts the embedded server when
// there is one, connects, and makes sure the cluster's streams and buckets
// exist with cfg.Replicas replicas, waiting (at most cfg.ConnectTimeout)
// for enough servers to hold them.
func Dial(ctx context.Context, cfg Config) (*Link, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	l := &Link{cfg: cfg, log: cfg.Logger.Named("cluster")}
	ok := false
	defer func() {
		if !ok {
			l.Close()
		}
	}()
	opts := []nats.Option{
		nats.Name("palyra-host " + cfg.NodeName),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
		// The server's answer can take a while: a bcrypt-hashed password
		// is checked on every connect.
		nats.Timeout(cfg.ConnectTimeout),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				l.log.Warn("NATS connection lost", "error", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { l.log.Info("NATS connection back", "url", c.ConnectedUrlRedacted()) }),
	}
	url := ""
	if cfg.Embedded != nil {
		srv, tokenClients, err := startEmbedded(cfg)
		if err != nil {
			return nil, err
		}
		l.srv = srv
		opts = append(opts, nats.InProcessServer(srv))
		if tokenClients {
			opts = append(opts, nats.Token(cfg.Embedded.Token))
		}
	} else {
		for i, u := range cfg.URLs {
			if i > 0 {
				url += ","
			}
			url += u
		}
		if cfg.TLS.CAFile != "" {
			opts = append(opts, nats.RootCAs(cfg.TLS.CAFile))
		}
		if cfg.TLS.CertFile != "" {
			opts = append(opts, nats.ClientCert(cfg.TLS.CertFile, cfg.TLS.KeyFile))
		}
	}
	user, err := userOptions(cfg)
	if err != nil {
		return nil, err
	}
	opts = append(opts, user...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: connect %s: %v", ErrClusterUnavailable, l.serverName(), err)
	}
	l.nc = nc
	if l.js, err = jetstream.New(nc); err != nil {
		return nil, fmt.Errorf("cluster: jetstream: %w", err)
	}
	if err := l.ensure(ctx); err != nil {
		return nil, err
	}
	if l.skillStorage, err = NewKVStorage(ctx, nc, l.storage); err != nil {
		return nil, err
	}
	ok = true
	l.log.Info("joined the cluster", "cluster", cfg.ClusterName, "node", cfg.NodeName, "replicas", cfg.Replicas, "embedded", cfg.Embedded != nil)
	return l, nil
}

// userOptions are the options that authenticate the node's NATS user
// (Config.CredsFile, NKeyFile, User/Password; Validate allows one).
func userOptions(cfg Config) ([]nats.Option, error) {
	switch {
	case cfg.CredsFile != "":
		if _, err := os.Stat(cfg.CredsFile); err != nil {
			return nil, fmt.Errorf("%w: credentials file: %v", ErrInvalidConfig, err)
		}
		return []nats.Option{nats.UserCredentials(cfg.CredsFile)}, nil
	case cfg.NKeyFile != "":
		o, err := nats.NkeyOptionFromSeed(cfg.NKeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: nkey seed file %s: %v", ErrInvalidConfig, cfg.NKeyFile, err)
		}
		return []nats.Option{o}, nil
	case cfg.User != "":
		return []nats.Option{nats.UserInfo(cfg.User, cfg.Password)}, nil
	}
	return nil, nil
}

// serverName names the servers the link connects to, for errors: the
// URLs (credentials redacted), or the embedded server's client listener.
func (l *Link) serverName() string {
	if l.srv != nil {
		return "the embedded server (" + l.srv.ClientURL() + ")"
	}
	return redactURLs(l.cfg.URLs)
}

// ensure creates or finds the streams and buckets, retrying while the
// cluster has too few servers to place them.
func (l *Link) ensure(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.ConnectTimeout)
	defer cancel()
	r := l.cfg.Replicas
	var last error
	for {
		last = l.ensureOnce(ctx, r)
		if last == nil {
			return nil
		}
		l.log.Info("waiting for the cluster's streams", "error", last)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: the cluster's streams and buckets (replicas %d) are not available after %s: %v",
				ErrClusterUnavailable, r, l.cfg.ConnectTimeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (l *Link) ensureOnce(ctx context.Context, r int) error {
	// A replicated stream's create answers once its raft group has a
	// leader, and that answer can go missing while the cluster forms: a
	// create is sent with a short deadline and its outcome looked up.
	var errs []error
	try := func(name string, lookup, create func(context.Context) error) {
		if err := withTimeout(ctx, time.Second, lookup); err == nil {
			return
		}
		if err := withTimeout(ctx, 2*time.Second, create); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	try("stream "+OpsStream, func(c context.Context) (err error) {
		l.ops, err = l.js.Stream(c, OpsStream)
		return err
	}, func(c context.Context) (err error) {
		l.ops, err = l.js.CreateOrUpdateStream(c, jetstream.StreamConfig{
			Name:        OpsStream,
			Description: "Palyra-Go lifecycle changes, applied in order by every node",
			Subjects:    []string{OpsSubjectPrefix + ">"},
			Storage:     jetstream.FileStorage,
			Replicas:    r,
			Retention:   jetstream.LimitsPolicy,
			Duplicates:  2 * time.Minute,
			DenyDelete:  true,
			DenyPurge:   true,
			MaxMsgSize:  1 << 20,
		})
		return err
	})
	try("stream "+EventsStream, func(c context.Context) (err error) {
		l.events, err = l.js.Stream(c, EventsStream)
		return err
	}, func(c context.Context) (err error) {
		l.events, err = l.js.CreateOrUpdateStream(c, jetstream.StreamConfig{
			Name:        EventsStream,
			Description: "Palyra-Go lifecycle and hook events of the whole cluster",
			Subjects:    []string{EventsSubjectPrefix + ">"},
			Storage:     jetstream.FileStorage,
			Replicas:    r,
			Retention:   jetstream.LimitsPolicy,
			Duplicates:  2 * time.Minute,
			MaxMsgs:     1_000_000,
			MaxAge:      30 * 24 * time.Hour,
			MaxMsgSize:  1 << 20,
		})
		return err
	})
	try("object store "+ArtifactStore, func(c context.Context) (err error) {
		l.artifacts, err = l.js.ObjectStore(c, ArtifactStore)
		return err
	}, func(c context.Context) (err error) {
		l.artifacts, err = l.js.CreateOrUpdateObjectStore(c, jetstream.ObjectStoreConfig{
			Bucket:      ArtifactStore,
			Description: "Palyra-Go installed artifacts by sha256",
			Storage:     jetstream.FileStorage,
			Replicas:    r,
		})
		return err
	})
	try("key-value bucket "+StorageBucket, func(c context.Context) (err error) {
		l.storage, err = l.js.KeyValue(c, StorageBucket)
		return err
	}, func(c context.Context) (err error) {
		l.storage, err = l.js.CreateOrUpdateKeyValue(c, jetstream.KeyValueConfig{
			Bucket:       StorageBucket,
			Description:  "Palyra-Go skills' storage capability",
			Storage:      jetstream.FileStorage,
			Replicas:     r,
			History:      1,
			MaxValueSize: MaxPayload - 64<<10,
		})
		return err
	})
	try("key-value bucket "+SecretsBucket, func(c context.Context) (err error) {
		l.secrets, err = l.js.KeyValue(c, SecretsBucket)
		return err
	}, func(c context.Context) (err error) {
		l.secrets, err = l.js.CreateOrUpdateKeyValue(c, jetstream.KeyValueConfig{
			Bucket:       SecretsBucket,
			Description:  "Palyra-Go vault entries, sealed (ciphertext only; each node keeps its key)",
			Storage:      jetstream.FileStorage,
			Replicas:     r,
			History:      1,
			MaxValueSize: 1 << 20,
		})
		return err
	})
	return errors.Join(errs...)
}

func withTimeout(ctx context.Context, d time.Duration, fn func(context.Context) error) error {
	c, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return fn(c)
}

// Close closes the connection and stops the embedded server.
func (l *Link) Close() error {
	if l.nc != nil {
		l.nc.Close()
	}
	if l.srv != nil {
		l.srv.Shutdown()
		l.srv.WaitForShutdown()
	}
	return nil
}

// Config is the link's configuration, defaults filled in.
func (l *Link) Config() Config { return l.cfg }

// NodeName is this node's name.
func (l *Link) NodeName() string { return l.cfg.NodeName }

// Conn is the NATS connection.
func (l *Link) Conn() *nats.Conn { return l.nc }

// JetStream is the connection's JetStream context.
func (l *Link) JetStream() jetstream.JetStream { return l.js }

// Ops is the stream of lifecycle changes.
func (l *Link) Ops() jetstream.Stream { return l.ops }

// Events is the stream of the cluster's events.
func (l *Link) Events() jetstream.Stream { return l.events }

// Artifacts is the object store of artifacts.
func (l *Link) Artifacts() jetstream.ObjectStore { return l.artifacts }

// StorageKV is the key-value bucket of the skills' storage.
func (l *Link) StorageKV() jetstream.KeyValue { return l.storage }

// SecretsKV is the key-value bucket of the vault's sealed entries.
func (l *Link) SecretsKV() jetstream.KeyValue { return l.secrets }

// SkillStorage is the skills' storage backend over StorageKV, for
// host.Config.Storage on a clustered node (the host does not close it).
func (l *Link) SkillStorage() storage.Backend { return l.skillStorage }

// Server is the embedded nats-server (nil with URLs).
func (l *Link) Server() *server.Server { return l.srv }

// ClientURL is the URL other NATS clients (the nats CLI) reach this node's
// embedded server at; "" with URLs.
func (l *Link) ClientURL() string {
	if l.srv == nil {
		return ""
	}
	return l.srv.ClientURL()
}

// RouteURL is the embedded server's route listener as a nats-route URL
// (what other nodes put in their routes); "" with URLs.
func (l *Link) RouteURL() string {
	if l.srv == nil || l.srv.ClusterAddr() == nil {
		return ""
	}
	return "nats-route://" + l.srv.ClusterAddr().String()
}

// Unavailable maps a failure of NATS or JetStream to ErrClusterUnavailable
// (no quorum, no responders, a timeout, a closed connection), keeping the
// cause; any other error is returned as is.
func Unavailable(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrClusterUnavailable):
		return err
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, nats.ErrTimeout),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrConnectionClosed),
		errors.Is(err, nats.ErrDisconnected), errors.Is(err, jetstream.ErrNoStreamResponse),
		errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, nats.ErrNoServers):
		return fmt.Errorf("%w: %v", ErrClusterUnavailable, err)
	}
	var apiErr *jetstream.APIError
	// 10158 "duplicate message id is in process": an earlier try of the
	// same write is still waiting for a quorum.
	if errors.As(err, &apiErr) && (apiErr.Code == 503 || apiErr.Code == 504 || apiErr.ErrorCode == 10158) {
		return fmt.Errorf("%w: %v", ErrClusterUnavailable, err)
	}
	return err
}

func redactURLs(us []string) string {
	out := ""
	for i, u := range us {
		if i > 0 {
			out += ","
		}
		if p, err := url.Parse(u); err == nil {
			out += p.Redacted()
		}
	}
	return out
}
