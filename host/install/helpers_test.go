package install

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/policy"
)

// testKey signs every test artifact: seed 0x05 × 32, as Palyra's skills
// unit tests use.
var testKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x05}, ed25519.SeedSize))

// testPubHex is the public key of testKey, for --trusted-publisher.
var testPubHex = hex.EncodeToString(testKey.Public().(ed25519.PublicKey))

// trustAcme allowlists testKey for publisher acme.
var trustAcme = []TrustedKey{{Publisher: "acme", PublicKeyHex: testPubHex}}

// signedAt is the fixed signing time of test artifacts, so the same spec
// gives the same bytes.
var signedAt = time.Unix(1_730_000_000, 0)

// skillSpec describes a test artifact.
type skillSpec struct {
	id, version string
	publisher   string // default "acme"
	hosts       []string
	writeRoots  []string
	module      string // testdata/audit/<module>.wasm (the audit's fixtures); default palyra_baseline
	moduleBytes []byte // overrides module
	key         ed25519.PrivateKey
	signedAt    time.Time
	asset       []byte // an extra assets/data.bin when set
	inputSchema string // the tool's input_schema as a TOML value; default { type = "object" }
	// builder, when set, adds a [builder] section (dynamic tool builder
	// output) with this review_status ("-" writes none).
	builder string
}

func (s skillSpec) manifest() string {
	pub := s.publisher
	if pub == "" {
		pub = "acme"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "manifest_version = 2\nskill_id = %q\nname = \"Test skill\"\nversion = %q\npublisher = %q\n\n", s.id, s.version, pub)
	in := s.inputSchema
	if in == "" {
		in = `{ type = "object" }`
	}
	fmt.Fprintf(&b, "[[entrypoints.tools]]\nid = \"%s.run\"\nname = \"run\"\ndescription = \"Runs.\"\ninput_schema = %s\noutput_schema = { type = \"object\" }\n\n", pub, in)
	b.WriteString("[capabilities]\nhttp_egress_allowlist = [")
	for i, h := range s.hosts {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", h)
	}
	b.WriteString("]\n\n[capabilities.filesystem]\nwrite_roots = [")
	for i, r := range s.writeRoots {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", r)
	}
	b.WriteString("]\n\n[compat]\nrequired_protocol_major = 1\nmin_palyra_version = \"0.1.0\"\n\n")
	b.WriteString("[operator]\ndisplay_name = \"Test skill\"\nsummary = \"A test skill.\"\n")
	if s.builder != "" {
		b.WriteString("\n[builder]\nexperimental = true\nsource_kind = \"prompt\"\nsource_ref = \"test\"\nrollout_flag = \"test_flag\"\n")
		if s.builder != "-" {
			fmt.Fprintf(&b, "review_status = %q\n", s.builder)
		}
		b.WriteString("\n[builder.checklist]\ncapability_declaration_path = \"skill.toml\"\nprovenance_path = \"provenance.json\"\ntest_harness_path = \"tests/harness.json\"\n")
	}
	return b.String()
}

const testSBOM = `{"bomFormat":"CycloneDX","specVersion":"1.6","version":1}`
const testProvenance = `{"builder":{"id":"test"},"subject":[{"name":"modules/module.wasm","digest":{"sha256":"test"}}]}`

// build signs the artifact of s.
func build(tb testing.TB, s skillSpec) []byte {
	tb.Helper()
	mod := s.moduleBytes
	if mod == nil {
		name := s.module
		if name == "" {
			name = "palyra_baseline"
		}
		var err error
		if mod, err = os.ReadFile(filepath.Join("..", "..", "testdata", "audit", name+".wasm")); err != nil {
			tb.Fatal(err)
		}
	}
	key := s.key
	if key == nil {
		key = testKey
	}
	at := s.signedAt
	if at.IsZero() {
		at = signedAt
	}
	in := artifact.BuildInput{
		Manifest:   []byte(s.manifest()),
		Modules:    []artifact.File{{Path: "module.wasm", Data: mod}},
		SBOM:       []byte(testSBOM),
		Provenance: []byte(testProvenance),
		SigningKey: key,
		SignedAt:   at,
	}
	if s.asset != nil {
		in.Assets = []artifact.File{{Path: "data.bin", Data: s.asset}}
	}
	built, err := artifact.Build(in)
	if err != nil {
		tb.Fatalf("build %s %s: %v", s.id, s.version, err)
	}
	return built.Bytes
}

// open opens an Installer on state, closing it when the test ends.
func open(tb testing.TB, state string, prof *policy.Profile) *Installer {
	tb.Helper()
	in, err := Open(context.Background(), Config{StateDir: state, Policy: prof})
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() { _ = in.Close() })
	return in
}

// checkState asserts the invariants that hold after every operation and
// after every recovery: no staging or set-aside directory, every installed
// version has its directory with the recorded artifact, every entry of it
// extracted and the metadata, and a status row; no version directory
// without a row; exactly one current version per skill, the highest that
// is not held back, and every held-back version above it; no pending trust
// pin; the trust store parses. known, when not nil, maps "<id>@<version>" to the
// artifact SHA-256s that version may have.
func checkState(ctx context.Context, in *Installer, known map[string][]string) error {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	rows, err := in.db.Skills(ctx, inventory.Filter{})
	if err != nil {
		return err
	}
	bySkill := map[string][]inventory.Entry{}
	for _, e := range rows {
		bySkill[e.SkillID] = append(bySkill[e.SkillID], e)
		dir := in.VersionDir(e.SkillID, e.Version)
		data, err := readArtifact(dir, e.ArtifactSHA256)
		if err != nil {
			fail("%s %s: %v", e.SkillID, e.Version, err)
			continue
		}
		if known != nil && !slices.Contains(known[e.SkillID+"@"+e.Version], e.ArtifactSHA256) {
			fail("%s %s: artifact %s is none of the built ones", e.SkillID, e.Version, e.ArtifactSHA256)
		}
		ins, err := artifact.Inspect(data)
		if err != nil {
			fail("%s %s: installed artifact: %v", e.SkillID, e.Version, err)
			continue
		}
		for name, want := range ins.Entries {
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
			if err != nil || !bytes.Equal(got, want) {
				fail("%s %s: entry %s not extracted intact (%v)", e.SkillID, e.Version, name, err)
			}
		}
		var meta Metadata
		if mj, err := os.ReadFile(filepath.Join(dir, MetadataFile)); err != nil {
			fail("%s %s: %v", e.SkillID, e.Version, err)
		} else if err := json.Unmarshal(mj, &meta); err != nil || meta.ArtifactSHA256 != e.ArtifactSHA256 {
			fail("%s %s: metadata %s does not match (%v)", e.SkillID, e.Version, mj, err)
		}
		if e.Status == nil {
			fail("%s %s: no status row", e.SkillID, e.Version)
		}
	}
	for id, es := range bySkill {
		var cur []string
		highest := ""
		for _, e := range es {
			if e.Current {
				cur = append(cur, e.Version)
			}
			if e.HeldBack == nil {
				highest = e.Version
			}
		}
		if len(cur) != 1 || cur[0] != highest {
			fail("%s: current versions %v, want only the highest not held back, %s", id, cur, highest)
			continue
		}
		for _, e := range es {
			if e.HeldBack != nil && inventory.CompareVersions(e.Version, cur[0]) <= 0 {
				fail("%s: %s is held back but not above the current %s", id, e.Version, cur[0])
			}
		}
	}
	if pins, err := in.db.PendingPins(ctx); err != nil || len(pins) > 0 {
		fail("pending trust pins left: %v (%v)", pins, err)
	}
	dirs, err := os.ReadDir(in.skillsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		sub, err := os.ReadDir(filepath.Join(in.skillsDir, d.Name()))
		if err != nil {
			return err
		}
		for _, s := range sub {
			name := s.Name()
			switch {
			case strings.HasPrefix(name, ".tmp-") || strings.HasPrefix(name, setAsidePrefix):
				fail("%s/%s left behind", d.Name(), name)
			case name == lockName:
			default:
				if !slices.ContainsFunc(bySkill[d.Name()], func(e inventory.Entry) bool { return e.Version == name }) {
					fail("%s/%s has no inventory row", d.Name(), name)
				}
			}
		}
	}
	if _, err := in.trust.Load(ctx); err != nil {
		fail("trust store: %v", err)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

func mustState(t *testing.T, in *Installer) {
	t.Helper()
	if err := checkState(context.Background(), in, nil); err != nil {
		t.Fatalf("state invariants:\n%v", err)
	}
}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// writeZip writes entries as a plain ZIP (Deflate, sorted names).
func writeZip(tb testing.TB, path string, entries map[string][]byte) {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range slices.Sorted(maps.Keys(entries)) {
		w, err := zw.Create(n)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write(entries[n]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
}
