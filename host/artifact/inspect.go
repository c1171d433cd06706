package artifact

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/skillpath"
	"github.com/palyra-go/palyra/host/manifest"
)

// Inspection is the result of steps 1–11 of the verification order: an
// artifact whose structure, payload hash, signature, publisher binding,
// integrity list and compatibility all check out. Whether its key is
// trusted has not been decided; that is Verify's step 12.
type Inspection struct {
	// Manifest is the parsed and validated skill.toml.
	Manifest *manifest.Manifest
	// Signature is the parsed signature.json.
	Signature Signature
	// PublicKey is the signing key from Signature, already decoded.
	PublicKey ed25519.PublicKey
	// PayloadSHA256 is the recomputed payload hash (equal to
	// Signature.PayloadSHA256).
	PayloadSHA256 string
	// Warnings are the manifest's non-blocking findings.
	Warnings []manifest.Warning
	// Entries holds every entry by normalized path, signature.json
	// included. The byte slices are shared with the Archive and must not
	// be modified.
	Entries map[string][]byte
}

// Inspect decodes and inspects the artifact in data; see (*Archive).Inspect.
func Inspect(data []byte) (*Inspection, error) {
	a, err := ReadBytes(data)
	if err != nil {
		return nil, err
	}
	return a.Inspect()
}

// Inspect runs steps 2–11 of the verification order on a decoded archive,
// in this order, returning the first failure:
//
//  2. skill.toml present, UTF-8, parses and validates (manifest errors);
//  3. sbom.cdx.json present and a CycloneDX object (ErrInvalidSBOM);
//  4. provenance.json present with builder and subject (ErrInvalidProvenance);
//  5. at least one modules/*.wasm entry;
//  6. signature.json present and strictly parsed (ErrInvalidSignatureDocument);
//  7. payload hash equals payload_sha256 (ErrPayloadHashMismatch);
//  8. algorithm, key, key_id, signature encoding and Ed25519 verification;
//  9. signature publisher equals manifest publisher (ErrSignatureVerification);
//  10. integrity list equals the payload exactly (manifest.ErrValidation);
//  11. manifest.CheckCompat.
//
// A missing entry is ErrMissingEntry naming it. Note that steps 2–6 parse
// content before the signature is checked, as Palyra does; that content
// is bounded by Read's limits.
func (a *Archive) Inspect() (*Inspection, error) {
	// Step 2.
	mbytes, ok := a.entries[ManifestPath]
	if !ok {
		return nil, &Error{Err: ErrMissingEntry, Path: ManifestPath}
	}
	m, err := parseManifest(mbytes)
	if err != nil {
		return nil, err
	}
	// Step 3.
	sbom, ok := a.entries[SBOMPath]
	if !ok {
		return nil, &Error{Err: ErrMissingEntry, Path: SBOMPath}
	}
	if err := validateSBOM(sbom); err != nil {
		return nil, err
	}
	// Step 4.
	prov, ok := a.entries[ProvenancePath]
	if !ok {
		return nil, &Error{Err: ErrMissingEntry, Path: ProvenancePath}
	}
	if err := validateProvenance(prov); err != nil {
		return nil, err
	}
	// Step 5.
	if !hasModule(a.names) {
		return nil, &Error{Err: ErrMissingEntry, Path: "modules/*.wasm"}
	}
	// Step 6.
	sbytes, ok := a.entries[SignaturePath]
	if !ok {
		return nil, &Error{Err: ErrMissingEntry, Path: SignaturePath}
	}
	sig, err := parseSignature(sbytes)
	if err != nil {
		return nil, err
	}
	// Step 7.
	payload := PayloadSHA256(a.entries)
	if payload != sig.PayloadSHA256 {
		return nil, &Error{Err: ErrPayloadHashMismatch, Detail: "the entries hash to " + payload + ", signature.json signs " + sig.PayloadSHA256}
	}
	// Step 8.
	pub, err := verifySignature(&sig, payload)
	if err != nil {
		return nil, err
	}
	// Step 9.
	if sig.Publisher != m.Publisher {
		return nil, &Error{Err: ErrSignatureVerification, Path: SignaturePath, Detail: "publisher does not match the manifest publisher"}
	}
	// Step 10.
	if err := checkIntegrity(m, a.entries); err != nil {
		return nil, err
	}
	// Step 11.
	if err := manifest.CheckCompat(m); err != nil {
		return nil, fmt.Errorf("artifact: compat: %w", err)
	}
	return &Inspection{
		Manifest:      m,
		Signature:     sig,
		PublicKey:     pub,
		PayloadSHA256: payload,
		Warnings:      nonNil(m.Warnings()),
		Entries:       a.entries,
	}, nil
}

// parseManifest checks skill.toml is UTF-8 and parses it. An error from
// the manifest package that carries no code (the package is expected to
// always give one) is reported as manifest.ErrParse.
func parseManifest(b []byte) (*manifest.Manifest, error) {
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("artifact: %s: not valid UTF-8: %w", ManifestPath, manifest.ErrParse)
	}
	m, err := manifest.Parse(b)
	if err != nil {
		if errcode.Of(err) == errcode.Internal {
			return nil, fmt.Errorf("artifact: %s: %w: %w", ManifestPath, manifest.ErrParse, err)
		}
		return nil, fmt.Errorf("artifact: %s: %w", ManifestPath, err)
	}
	return m, nil
}

func hasModule(names []string) bool {
	for _, n := range names {
		if strings.HasPrefix(n, "modules/") && strings.HasSuffix(n, ".wasm") {
			return true
		}
	}
	return false
}

// checkIntegrity is step 10: the manifest's integrity list, with its paths
// normalized, must equal {path: sha256} over every entry but skill.toml and
// signature.json — no missing path, no extra path, identical hex (case
// sensitive). Like Palyra, a path listed twice keeps its last hash.
func checkIntegrity(m *manifest.Manifest, entries map[string][]byte) error {
	declared := make(map[string]string, len(m.Integrity.Files))
	for _, f := range m.Integrity.Files {
		p, err := skillpath.Normalize(f.Path)
		if err != nil {
			return fmt.Errorf("artifact: integrity.files: %w", err)
		}
		declared[p] = f.SHA256
	}
	actual := make(map[string]string, len(entries))
	for name, data := range entries {
		if name != ManifestPath && name != SignaturePath {
			actual[name] = sha256Hex(data)
		}
	}
	paths := make([]string, 0, len(actual)+len(declared))
	for p := range actual {
		paths = append(paths, p)
	}
	for p := range declared {
		if _, ok := actual[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		want, listed := declared[p]
		got, present := actual[p]
		var detail string
		switch {
		case !listed:
			detail = "entry is not in integrity.files"
		case !present:
			detail = "integrity.files names an entry the artifact lacks"
		case want != got:
			detail = "sha256 differs from integrity.files"
		default:
			continue
		}
		return &Error{Err: manifest.ErrValidation, Path: p, Detail: "manifest integrity does not match artifact payload: " + detail}
	}
	return nil
}

// maxJSONDepth is the deepest nesting serde_json accepts (its recursion
// limit of 128 fails at the 128th level).
const maxJSONDepth = 127

// jsonObject parses b the way serde_json::from_slice::<Value> does and
// returns its members: valid UTF-8, a single JSON object, nesting at most
// maxJSONDepth, nothing after it. A key given twice keeps its last value.
func jsonObject(b []byte) (map[string]json.RawMessage, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("not valid UTF-8")
	}
	if !json.Valid(b) {
		var v any
		return nil, json.Unmarshal(b, &v) // for the syntax error's text
	}
	if d := jsonDepth(b); d > maxJSONDepth {
		return nil, fmt.Errorf("nesting depth %d is above %d", d, maxJSONDepth)
	}
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// jsonDepth returns the deepest array/object nesting of valid JSON b.
func jsonDepth(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// validateSBOM checks sbom.cdx.json: a JSON object whose bomFormat is the
// string "CycloneDX" and whose specVersion is a non-empty string.
func validateSBOM(b []byte) error {
	bad := func(detail string, cause error) error {
		return &Error{Err: ErrInvalidSBOM, Path: SBOMPath, Detail: detail, Cause: cause}
	}
	obj, err := jsonObject(b)
	if err != nil {
		return bad("", err)
	}
	if f, err := jsonString(obj["bomFormat"]); err != nil || f != "CycloneDX" {
		return bad("bomFormat must be \"CycloneDX\"", nil)
	}
	if v, err := jsonString(obj["specVersion"]); err != nil || v == "" {
		return bad("specVersion must be a non-empty string", nil)
	}
	return nil
}

// validateProvenance checks provenance.json: a JSON object with a builder
// object and a non-empty subject array. Nothing else is checked.
func validateProvenance(b []byte) error {
	bad := func(detail string, cause error) error {
		return &Error{Err: ErrInvalidProvenance, Path: ProvenancePath, Detail: detail, Cause: cause}
	}
	obj, err := jsonObject(b)
	if err != nil {
		return bad("", err)
	}
	if builder := obj["builder"]; len(builder) == 0 || builder[0] != '{' {
		return bad("builder must be an object", nil)
	}
	var subject []json.RawMessage
	if s := obj["subject"]; len(s) == 0 || s[0] != '[' || json.Unmarshal(s, &subject) != nil || len(subject) == 0 {
		return bad("subject must be a non-empty array", nil)
	}
	return nil
}

// nonNil returns s, or an empty slice for nil, so that reports encode [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
