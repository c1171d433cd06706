package vault

import (
	"fmt"
	"github.com/palyra-go/palyra/internal/textutil"
	"strings"
)

// Name limits. Manifest identifiers have no length limit of their own; the
// vault bounds them so that a name in a file, an error or a listing stays
// small.
const (
	// MaxKeyBytes is the longest key part of a name.
	MaxKeyBytes = 128
	// MaxScopeBytes is the longest scope part of a name ("skill:" and the id
	// included).
	MaxScopeBytes = 256
)

// NodeLocalKeyPrefix starts the key of an entry that records this node's
// own state rather than a secret of the deployment (the "sealed once"
// marker of this node's trust store, say): a cluster's secret replication
// never publishes or imports one (Name.NodeLocal).
const NodeLocalKeyPrefix = "node-local."

// NodeLocal reports whether n is node-local state (its key starts with
// NodeLocalKeyPrefix).
func (n Name) NodeLocal() bool { return strings.HasPrefix(n.Key, NodeLocalKeyPrefix) }

// scopeKinds are the scope prefixes that take an id; "global" takes none.
var scopeKinds = []string{"skill:", "principal:", "channel:"}

// Name is the full name of a secret: a scope and a key within it. It is
// written "<scope>/<key>", exactly as a skill manifest's secret grants are
// (manifest.CapabilityGrants().SecretKeys).
//
// Scope is "global", "skill:<id>", "principal:<id>", "channel:<id>", or
// SigningScope (publishers' signing keys, which no skill manifest can name:
// a skill can never be granted one), where
// id is a manifest identifier (non-empty, only a-z, 0-9, '.', '_', ':' and
// '-'), so "principal:admin:ops" is a valid scope. Key is an identifier too,
// the rule of a manifest's key_names, at most MaxKeyBytes long. Neither part
// contains '/'. Names are compared exactly: no trimming, no case folding.
type Name struct {
	Scope string
	Key   string
}

// NameError reports an invalid name and the part at fault. It wraps
// ErrInvalidName. It does not quote the name: a name that fails is often a
// value typed in the wrong place, so the error gives the part, its length
// and the first offending byte and its position instead.
type NameError struct {
	// Part is "name", "scope" or "key".
	Part string
	// Reason says what is wrong with the part.
	Reason string
}

// Error names the part and the reason.
func (e *NameError) Error() string {
	return fmt.Sprintf("%s: %s %s", ErrInvalidName.Error(), e.Part, e.Reason)
}

// Unwrap returns ErrInvalidName.
func (e *NameError) Unwrap() error { return ErrInvalidName }

// ParseName parses "<scope>/<key>". The scope may contain ':' but neither
// part contains '/': the name splits at its only '/'.
func ParseName(s string) (Name, error) {
	scope, key, ok := strings.Cut(s, "/")
	if !ok {
		return Name{}, &NameError{Part: "name", Reason: fmt.Sprintf("must be <scope>/<key>, found no '/' in %d bytes", len(s))}
	}
	n := Name{Scope: scope, Key: key}
	if err := n.Validate(); err != nil {
		return Name{}, err
	}
	return n, nil
}

// MustParseName is ParseName for names fixed at compile time; it panics on
// an invalid one.
func MustParseName(s string) Name {
	n, err := ParseName(s)
	if err != nil {
		panic(err)
	}
	return n
}

// String returns "<scope>/<key>".
func (n Name) String() string { return n.Scope + "/" + n.Key }

// Validate reports whether n is a valid name; the error is a *NameError.
func (n Name) Validate() error {
	if r := scopeReason(n.Scope); r != "" {
		return &NameError{Part: "scope", Reason: r}
	}
	if r := keyReason(n.Key); r != "" {
		return &NameError{Part: "key", Reason: r}
	}
	return nil
}

// SigningScope is the scope of publishers' signing keys (palyra keys
// generate --vault-ref signing/<key>). A skill manifest's secret scopes are
// global, skill:, principal: and channel: only, so no skill can be granted
// a signing key.
const SigningScope = "signing"

func scopeReason(s string) string {
	if s == "global" || s == SigningScope {
		return ""
	}
	if len(s) > MaxScopeBytes {
		return fmt.Sprintf("is %d bytes, over the %d-byte limit", len(s), MaxScopeBytes)
	}
	for _, prefix := range scopeKinds {
		id, ok := strings.CutPrefix(s, prefix)
		if !ok {
			continue
		}
		if id == "" {
			return fmt.Sprintf("has an empty id after %q", prefix)
		}
		if r := identifierReason(id); r != "" {
			return "id " + r
		}
		return ""
	}
	return fmt.Sprintf("must be global, signing, skill:<id>, principal:<id> or channel:<id>, found %d bytes that are none of these", len(s))
}

func keyReason(k string) string {
	if k == "" {
		return "must not be empty"
	}
	if len(k) > MaxKeyBytes {
		return fmt.Sprintf("is %d bytes, over the %d-byte limit", len(k), MaxKeyBytes)
	}
	return identifierReason(k)
}

// identifierReason is the manifest's identifier rule (host/manifest) without its
// trimming: only a-z, 0-9, '.', '_', ':' and '-'.
func identifierReason(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return fmt.Sprintf("must contain only a-z, 0-9, '.', '_', ':' and '-', found %q at byte %d", c, i)
		}
	}
	return ""
}

// cut shortens s to at most n bytes for an error message (of text that is
// never a secret).
func cut(s string, n int) string { return textutil.Ellipsize(s, n, "...") }
