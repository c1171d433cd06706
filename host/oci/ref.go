package oci

import (
	"fmt"
	"net"
	"strings"

	"oras.land/oras-go/v2/registry"
)

// Scheme prefixes every reference this package takes.
const Scheme = "oci://"

// Reference is a parsed oci:// reference.
type Reference struct {
	// Registry is the registry's host[:port].
	Registry string
	// Repository is the repository path.
	Repository string
	// Tag is the tag, "" when none was given.
	Tag string
	// Digest is sha256:HEX, "" when none was given. When both are given,
	// the digest decides what is pulled.
	Digest string
}

// ParseReference parses oci://REGISTRY/REPOSITORY[:TAG][@sha256:HEX].
func ParseReference(s string) (Reference, error) {
	bad := func(why string) (Reference, error) {
		return Reference{}, fmt.Errorf("oci: %w %q: %s", ErrInvalidReference, s, why)
	}
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		return bad("want oci://REGISTRY/REPOSITORY[:TAG|@sha256:HEX]")
	}
	var r Reference
	if i := strings.Index(rest, "@"); i >= 0 {
		rest, r.Digest = rest[:i], rest[i+1:]
		if !strings.HasPrefix(r.Digest, "sha256:") {
			return bad("the digest must be sha256:HEX")
		}
	}
	slash := strings.Index(rest, "/")
	if slash <= 0 {
		return bad("no repository after the registry")
	}
	r.Registry, rest = rest[:slash], rest[slash+1:]
	if i := strings.LastIndex(rest, ":"); i >= 0 {
		rest, r.Tag = rest[:i], rest[i+1:]
		if r.Tag == "" {
			return bad("empty tag")
		}
	}
	r.Repository = rest
	or := registry.Reference{Registry: r.Registry, Repository: r.Repository}
	if err := or.ValidateRegistry(); err != nil {
		return bad("invalid registry")
	}
	if err := or.ValidateRepository(); err != nil {
		return bad("invalid repository (lowercase path components)")
	}
	if r.Tag != "" {
		or.Reference = r.Tag
		if err := or.ValidateReferenceAsTag(); err != nil {
			return bad("invalid tag")
		}
	}
	if r.Digest != "" {
		or.Reference = r.Digest
		if err := or.ValidateReferenceAsDigest(); err != nil || len(r.Digest) != len("sha256:")+64 {
			return bad("invalid sha256 digest")
		}
	}
	return r, nil
}

// String returns the reference in oci:// form.
func (r Reference) String() string {
	s := Scheme + r.Repo()
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// Repo returns REGISTRY/REPOSITORY, without tag or digest.
func (r Reference) Repo() string { return r.Registry + "/" + r.Repository }

// target is the tag or digest to resolve: the digest when there is one.
func (r Reference) target() string {
	if r.Digest != "" {
		return r.Digest
	}
	return r.Tag
}

// IsLoopback reports whether a registry host[:port] is a loopback address
// or localhost.
func IsLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
