package inventory

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Caps on the text the package stores. A value over its cap is refused with
// ErrInvalidArgument naming the cap and the size seen.
const (
	// MaxIdentifierBytes caps skill ids, publishers, principals, key ids and
	// other short names.
	MaxIdentifierBytes = 256
	// MaxReasonBytes caps a status or event reason.
	MaxReasonBytes = 4096
	// MaxJSONBytes caps each JSON document (manifest, audit report, grants,
	// event details).
	MaxJSONBytes = 1 << 20
)

// normalizeSkillID trims and lower-cases id, then checks that it is a
// Palyra identifier: non-empty, only [a-z0-9._:-].
func normalizeSkillID(field, id string) (string, error) {
	id = strings.ToLower(strings.TrimSpace(id))
	if err := checkIdentifier(field, id); err != nil {
		return "", err
	}
	return id, nil
}

func checkIdentifier(field, s string) error {
	if s == "" {
		return invalid(field, "must not be empty")
	}
	if len(s) > MaxIdentifierBytes {
		return invalid(field, "%d bytes, over the limit of %d", len(s), MaxIdentifierBytes)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return invalid(field, "%q has character %q outside [a-z0-9._:-]", s, c)
		}
	}
	return nil
}

// normalizeVersion returns the canonical form of a MAJOR.MINOR.PATCH
// version.
func normalizeVersion(field, v string) (string, error) {
	sv, ok := parseSemver(v)
	if !ok {
		return "", invalid(field, "%q is not MAJOR.MINOR.PATCH (three unsigned 32-bit integers)", v)
	}
	return sv.String(), nil
}

// normalizeOptionalVersion is normalizeVersion, except that a blank version
// stays "" (meaning "the current version" or "no version").
func normalizeOptionalVersion(field, v string) (string, error) {
	if strings.TrimSpace(v) == "" {
		return "", nil
	}
	return normalizeVersion(field, v)
}

// checkText checks a required short text field: trimmed, non-empty, valid
// UTF-8, without control characters, at most MaxIdentifierBytes.
func checkText(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", invalid(field, "must not be empty")
	}
	if len(s) > MaxIdentifierBytes {
		return "", invalid(field, "%d bytes, over the limit of %d", len(s), MaxIdentifierBytes)
	}
	if err := checkPrintable(field, s); err != nil {
		return "", err
	}
	return s, nil
}

// normalizeReason trims a reason; a blank one becomes "" (NULL).
func normalizeReason(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if len(s) > MaxReasonBytes {
		return "", invalid(field, "%d bytes, over the limit of %d", len(s), MaxReasonBytes)
	}
	if !utf8.ValidString(s) {
		return "", invalid(field, "not valid UTF-8")
	}
	return s, nil
}

func checkPrintable(field, s string) error {
	if !utf8.ValidString(s) {
		return invalid(field, "not valid UTF-8")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return invalid(field, "%q contains a control character", s)
		}
	}
	return nil
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

func checkSHA256(field, s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if !sha256Hex.MatchString(s) {
		return "", invalid(field, "%q is not 64 hex characters", s)
	}
	return s, nil
}

// checkJSON checks an optional JSON document; nil or empty stays NULL.
func checkJSON(field string, doc json.RawMessage) (any, error) {
	if len(doc) == 0 {
		return nil, nil
	}
	if len(doc) > MaxJSONBytes {
		return nil, invalid(field, "%d bytes, over the limit of %d", len(doc), MaxJSONBytes)
	}
	if !json.Valid(doc) {
		return nil, invalid(field, "not valid JSON")
	}
	return string(doc), nil
}

// checkInstallDir checks a path relative to the state directory and returns
// it with '/' separators.
func checkInstallDir(field, dir string) (string, error) {
	if strings.TrimSpace(dir) != dir || dir == "" {
		return "", invalid(field, "%q must be non-empty without surrounding white space", dir)
	}
	if !filepath.IsLocal(filepath.FromSlash(dir)) || strings.Contains(dir, `\`) {
		return "", invalid(field, "%q is not a path inside the state directory", dir)
	}
	if err := checkPrintable(field, dir); err != nil {
		return "", err
	}
	return filepath.ToSlash(filepath.Clean(filepath.FromSlash(dir))), nil
}

var eventKindRE = regexp.MustCompile(`^skill\.[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)

func checkEventKind(k EventKind) error {
	if len(k) > MaxIdentifierBytes || !eventKindRE.MatchString(string(k)) {
		return invalid("kind", "%q is not of the form skill.<name>", k)
	}
	return nil
}

// normalizeRecord validates r and returns it in stored form.
func normalizeRecord(r Record) (Record, error) {
	var err error
	if r.SkillID, err = normalizeSkillID("skill_id", r.SkillID); err != nil {
		return Record{}, err
	}
	if r.Version, err = normalizeVersion("version", r.Version); err != nil {
		return Record{}, err
	}
	if r.Publisher, err = checkText("publisher", r.Publisher); err != nil {
		return Record{}, err
	}
	if r.ArtifactSHA256, err = checkSHA256("artifact_sha256", r.ArtifactSHA256); err != nil {
		return Record{}, err
	}
	if r.PayloadSHA256, err = checkSHA256("payload_sha256", r.PayloadSHA256); err != nil {
		return Record{}, err
	}
	if r.SignatureKeyID, err = checkText("signature_key_id", r.SignatureKeyID); err != nil {
		return Record{}, err
	}
	if r.TrustDecision, err = checkText("trust_decision", r.TrustDecision); err != nil {
		return Record{}, err
	}
	var kind string
	if kind, err = checkText("source_kind", string(r.SourceKind)); err != nil {
		return Record{}, err
	}
	r.SourceKind = SourceKind(kind)
	if len(r.SourceRef) > MaxReasonBytes {
		return Record{}, invalid("source_ref", "%d bytes, over the limit of %d", len(r.SourceRef), MaxReasonBytes)
	}
	if err = checkPrintable("source_ref", r.SourceRef); err != nil {
		return Record{}, err
	}
	if r.InstallDir, err = checkInstallDir("install_dir", r.InstallDir); err != nil {
		return Record{}, err
	}
	if len(r.Manifest) == 0 {
		return Record{}, invalid("manifest", "must not be empty")
	}
	if r.ToolCount < 0 {
		return Record{}, invalid("tool_count", "%d is negative", r.ToolCount)
	}
	for i, s := range r.MissingSecrets {
		if strings.TrimSpace(s.Scope) == "" || strings.TrimSpace(s.Key) == "" {
			return Record{}, invalid("missing_secrets", "entry %d has an empty scope or key", i)
		}
	}
	return r, nil
}
