package source

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host/install"
)

// Ref names a skill version to fetch: an OCI reference, or a skill in a
// registry index (RegistryURL or RegistryDir, with SkillID and optionally
// Version). Exactly one of OCI, RegistryURL and RegistryDir is set.
type Ref struct {
	// OCI is oci://REGISTRY/REPOSITORY:TAG or
	// oci://REGISTRY/REPOSITORY@sha256:HEX.
	OCI string `json:"source,omitempty"`
	// RegistryURL is the https URL of a signed index.json.
	RegistryURL string `json:"registry_url,omitempty"`
	// RegistryDir is a local registry directory holding index.json.
	RegistryDir string `json:"registry_dir,omitempty"`
	// SkillID names the skill in a registry index.
	SkillID string `json:"skill_id,omitempty"`
	// Version is the version to fetch from an index; "" means the highest.
	Version string `json:"version,omitempty"`
	// RegistryCACert is a PEM CA bundle trusted, besides the Fetcher's
	// roots, for this RegistryURL (Palyra's --registry-ca-cert).
	RegistryCACert string `json:"registry_ca_cert,omitempty"`
	// PlainHTTP speaks HTTP, not HTTPS, to an OCI registry; refused unless
	// the registry's host is a loopback address.
	PlainHTTP bool `json:"plain_http,omitempty"`
}

// Fetched is an artifact got from a source.
type Fetched struct {
	// Artifact is the .palyra-skill file.
	Artifact []byte
	// Source is what the inventory records: the kind and a reference from
	// which Latest and RefAt find other versions.
	Source install.Source
	// SkillID, Version and Publisher are what the source said the artifact
	// is (the index entry, the OCI annotations); Fetch checked that the
	// manifest inside agrees.
	SkillID, Version, Publisher string
	// Digest is the OCI manifest digest (sha256:HEX), or the sha256 of the
	// artifact for an index entry.
	Digest string
}

// TrustFunc judges the key that signed a registry index, with the trust
// store's rules (allowlist, trust on first use); it returns the decision
// (allowlisted, tofu_pinned, tofu_newly_pinned) or the refusal.
type TrustFunc func(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error)

// Config configures a Fetcher. Library code reads no environment: the
// command resolves the docker credential file and the CA bundles.
type Config struct {
	// RootCAs are trusted for registry TLS servers besides the system
	// pool; nil means the system pool only.
	RootCAs *x509.CertPool
	// DockerConfig is the docker credential file (config.json) for OCI
	// registries; "" means anonymous access.
	DockerConfig string
	// PlainHTTP speaks HTTP to every OCI registry on a loopback address
	// (a Ref can ask for it too); other registries always use HTTPS.
	PlainHTTP bool
	// Trust judges registry index keys. Required to fetch from an index.
	Trust TrustFunc
	// Timeout bounds each registry request (Palyra's 20 s when zero).
	Timeout time.Duration
	// Logger receives one line per fetch; nil means none.
	Logger hclog.Logger
}

// DefaultTimeout bounds a registry request when Config.Timeout is zero.
const DefaultTimeout = 20 * time.Second

// Fetcher gets artifacts from registries. It is safe for concurrent use.
type Fetcher struct {
	cfg Config
}

// New returns a Fetcher with cfg.
func New(cfg Config) *Fetcher {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Fetcher{cfg: cfg}
}
