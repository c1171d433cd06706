package desired

import (
	"bytes"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/pelletier/go-toml/v2"

	"github.com/palyra-go/palyra/host/errcode"
)

// Limits of a document.
const (
	// MaxDocumentBytes bounds a document.
	MaxDocumentBytes = 1 << 20
	// MaxSkills bounds the skills a document declares.
	MaxSkills = 1000
	// MaxHooks bounds the hook bindings a document declares.
	MaxHooks = 1000
	// FormatVersion is the format this package reads.
	FormatVersion = 1
)

// ErrInvalidDocument is a document that does not parse or does not
// validate; the message names the key and what is wrong.
var ErrInvalidDocument = errcode.New("invalid_desired_state", "invalid desired-state document")

// Document is a desired state.
type Document struct {
	// Version is the format's version (FormatVersion).
	Version int `toml:"version"`
	// Skills are the skills the host should run.
	Skills []Skill `toml:"skill"`
	// Hooks are the hook bindings the host should have.
	Hooks []Hook `toml:"hook"`
}

// Skill is one declared skill.
type Skill struct {
	ID          string `toml:"id"`
	OCI         string `toml:"oci"`
	RegistryURL string `toml:"registry_url"`
	RegistryDir string `toml:"registry_dir"`
	// RegistryCACert is a PEM bundle of CAs trusted for the registry_url's
	// TLS server, besides the applying host's ("" = none).
	RegistryCACert string `toml:"registry_ca_cert"`
	// Version is a semver constraint ("" = any).
	Version   string `toml:"version"`
	AllowTOFU bool   `toml:"allow_tofu"`
	PlainHTTP bool   `toml:"plain_http"`
	Accept    Accept `toml:"accept"`

	constraint *semver.Constraints
}

// Accept is what the operator accepts a skill to be granted.
type Accept struct {
	HTTPHosts          []string `toml:"http_hosts"`
	Secrets            []string `toml:"secrets"`
	StoragePrefixes    []string `toml:"storage_prefixes"`
	Channels           []string `toml:"channels"`
	DeviceCapabilities []string `toml:"device_capabilities"`
	NodeCapabilities   []string `toml:"node_capabilities"`
	SecretRead         bool     `toml:"secret_read"`
}

// Hook is one declared hook binding.
type Hook struct {
	ID        string `toml:"id"`
	Event     string `toml:"event"`
	Skill     string `toml:"skill"`
	Tool      string `toml:"tool"`
	Enabled   *bool  `toml:"enabled"`
	TimeoutMs int64  `toml:"timeout_ms"`
}

// IsEnabled reports whether the hook is declared enabled (the default).
func (h Hook) IsEnabled() bool { return h.Enabled == nil || *h.Enabled }

// Parse reads and validates a document.
func Parse(data []byte) (*Document, error) {
	if len(data) > MaxDocumentBytes {
		return nil, fmt.Errorf("%w: the document is %d bytes, over the %d-byte limit (MaxDocumentBytes)", ErrInvalidDocument, len(data), MaxDocumentBytes)
	}
	var d Document
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) && len(strict.Errors) > 0 {
			keys := make([]string, 0, len(strict.Errors))
			for _, e := range strict.Errors {
				keys = append(keys, strings.Join(e.Key(), "."))
			}
			return nil, fmt.Errorf("%w: unknown key %s", ErrInvalidDocument, strings.Join(keys, ", "))
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("%w: line %d, column %d: %s", ErrInvalidDocument, row, col, de.Error())
		}
		return nil, fmt.Errorf("%w: %v", ErrInvalidDocument, err)
	}
	if err := d.validate(); err != nil {
		return nil, err
	}
	return &d, nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidDocument}, args...)...)
}

func (d *Document) validate() error {
	if d.Version != FormatVersion {
		return invalid("version: %d, this host reads version %d (set version = %d)", d.Version, FormatVersion, FormatVersion)
	}
	if len(d.Skills) > MaxSkills {
		return invalid("%d skills, over the limit of %d (MaxSkills)", len(d.Skills), MaxSkills)
	}
	if len(d.Hooks) > MaxHooks {
		return invalid("%d hooks, over the limit of %d (MaxHooks)", len(d.Hooks), MaxHooks)
	}
	seen := map[string]int{}
	for i := range d.Skills {
		s := &d.Skills[i]
		p := fmt.Sprintf("skill[%d]", i)
		s.ID = strings.ToLower(strings.TrimSpace(s.ID))
		if s.ID == "" {
			return invalid("%s.id: missing", p)
		}
		if j, dup := seen[s.ID]; dup {
			return invalid("%s.id: %q is declared already by skill[%d]", p, s.ID, j)
		}
		seen[s.ID] = i
		n := 0
		for _, src := range []string{s.OCI, s.RegistryURL, s.RegistryDir} {
			if strings.TrimSpace(src) != "" {
				n++
			}
		}
		if n != 1 {
			return invalid("%s (%s): give exactly one of oci, registry_url and registry_dir (got %d)", p, s.ID, n)
		}
		if s.OCI != "" && (strings.Contains(s.OCI[min(len(s.OCI), len("oci://")):], "@") || repoHasTag(s.OCI)) {
			return invalid("%s.oci (%s): %q names a tag or digest; give the repository, and the versions with version", p, s.ID, s.OCI)
		}
		if s.RegistryCACert != "" {
			if s.RegistryURL == "" {
				return invalid("%s.registry_ca_cert (%s): only with registry_url", p, s.ID)
			}
			if b, _ := pem.Decode([]byte(s.RegistryCACert)); b == nil || b.Type != "CERTIFICATE" {
				return invalid("%s.registry_ca_cert (%s): not a PEM certificate (-----BEGIN CERTIFICATE-----)", p, s.ID)
			}
		}
		if s.PlainHTTP && s.OCI == "" {
			return invalid("%s.plain_http (%s): only for an OCI registry on loopback", p, s.ID)
		}
		if v := strings.TrimSpace(s.Version); v != "" {
			c, err := semver.NewConstraint(v)
			if err != nil {
				return invalid("%s.version (%s): %q is not a semver constraint: %v", p, s.ID, v, err)
			}
			s.constraint = c
		}
	}
	hooks := map[string]int{}
	for i := range d.Hooks {
		h := &d.Hooks[i]
		p := fmt.Sprintf("hook[%d]", i)
		// Hook and skill ids as the hook store keeps them (trimmed,
		// lower-cased): "Audit" and "audit" are one binding.
		h.ID = strings.ToLower(strings.TrimSpace(h.ID))
		h.Skill = strings.ToLower(strings.TrimSpace(h.Skill))
		if h.ID == "" {
			return invalid("%s.id: missing", p)
		}
		if j, dup := hooks[h.ID]; dup {
			return invalid("%s.id: %q is declared already by hook[%d]", p, h.ID, j)
		}
		hooks[h.ID] = i
		if strings.TrimSpace(h.Event) == "" || strings.TrimSpace(h.Skill) == "" {
			return invalid("%s (%s): event and skill are required", p, h.ID)
		}
		if h.TimeoutMs < 0 {
			return invalid("%s.timeout_ms (%s): %d is negative", p, h.ID, h.TimeoutMs)
		}
	}
	return nil
}

// repoHasTag reports whether an oci:// reference has a tag after its last
// path element (a port's colon comes before the first '/').
func repoHasTag(ref string) bool {
	rest := strings.TrimPrefix(ref, "oci://")
	slash := strings.LastIndex(rest, "/")
	return slash >= 0 && strings.Contains(rest[slash:], ":")
}

// Pick returns the highest of versions that the skill's constraint allows
// (any release, without one), and false when none does. Versions that are
// not semver are ignored; a pre-release is picked only by a constraint that
// names one (Masterminds/semver's rule).
func (s *Skill) Pick(versions []string) (string, bool) {
	var best *semver.Version
	bestRaw := ""
	for _, raw := range versions {
		v, err := semver.StrictNewVersion(raw)
		if err != nil {
			continue
		}
		// Without a constraint, as under one that names none, a
		// pre-release is never the target: "the highest" is the highest
		// release.
		if (s.constraint == nil && v.Prerelease() != "") || (s.constraint != nil && !s.constraint.Check(v)) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestRaw = v, raw
		}
	}
	return bestRaw, best != nil
}

// Allows reports whether the skill's constraint allows version (any
// version without one).
func (s *Skill) Allows(version string) bool {
	if s.constraint == nil {
		return true
	}
	v, err := semver.StrictNewVersion(version)
	return err == nil && s.constraint.Check(v)
}

// Excess returns what a version granted hosts, secrets, storage prefixes,
// channels, device and node capabilities and secret reads has beyond what
// the skill's Accept lists, one line per item ("+ http host x"); empty
// when everything is accepted.
func (a Accept) Excess(hosts, secrets, storage, channels, devices, nodes []string, secretRead bool) []string {
	var out []string
	add := func(what string, got, ok []string) {
		for _, g := range got {
			if !slices.Contains(ok, g) {
				out = append(out, "+ "+what+" "+g)
			}
		}
	}
	add("http host", hosts, lower(a.HTTPHosts))
	add("secret", secrets, a.Secrets)
	add("storage prefix", storage, a.StoragePrefixes)
	add("channel", channels, a.Channels)
	add("device capability", devices, a.DeviceCapabilities)
	add("node capability", nodes, a.NodeCapabilities)
	if secretRead && !a.SecretRead {
		out = append(out, "+ secret values readable by the guest")
	}
	return out
}

func lower(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(s)), ".")
	}
	return out
}
