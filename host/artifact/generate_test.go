package artifact_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/audit"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// genClock is the fixed clock the generated documents read.
var genClock = time.Date(2026, 11, 27, 6, 30, 0, 0, time.UTC)

// genInput is the example input with neither SBOM nor provenance, two
// modules and two assets, and a fixed clock for the generated documents.
func genInput() artifact.BuildInput {
	in := exampleInput()
	in.SBOM, in.Provenance = nil, nil
	in.Modules = append(in.Modules, artifact.File{Path: "lib/second.wasm", Data: []byte("\x00asm\x01\x00\x00\x00\x00\x00")})
	in.Assets = []artifact.File{{Path: "prompts/hello.txt", Data: []byte("Say hello.\n")}, {Path: "LICENSE", Data: []byte("MIT\n")}}
	in.Generate = &artifact.Generate{BuilderVersion: "v1.2.3", Now: func() time.Time { return genClock }}
	return in
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// sbomDoc and provDoc are the parts of the generated documents the tests read.
type sbomDoc struct {
	BOMFormat    string `json:"bomFormat"`
	SpecVersion  string `json:"specVersion"`
	SerialNumber string `json:"serialNumber"`
	Version      int    `json:"version"`
	Metadata     struct {
		Timestamp string `json:"timestamp"`
		Tools     struct {
			Components []struct{ Name, Version string } `json:"components"`
		} `json:"tools"`
		Component struct {
			Type, Name, Version, Publisher string
			BOMRef                         string `json:"bom-ref"`
		} `json:"component"`
	} `json:"metadata"`
	Components []struct {
		Type     string `json:"type"`
		BOMRef   string `json:"bom-ref"`
		Name     string `json:"name"`
		MimeType string `json:"mime-type"`
		Hashes   []struct {
			Alg     string `json:"alg"`
			Content string `json:"content"`
		} `json:"hashes"`
	} `json:"components"`
	Dependencies []struct {
		Ref       string   `json:"ref"`
		DependsOn []string `json:"dependsOn"`
	} `json:"dependencies"`
}

type digestDoc struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

type provDoc struct {
	Type          string      `json:"_type"`
	Subject       []digestDoc `json:"subject"`
	PredicateType string      `json:"predicateType"`
	Predicate     struct {
		BuildDefinition struct {
			BuildType          string `json:"buildType"`
			ExternalParameters struct {
				SkillID   string   `json:"skill_id"`
				Version   string   `json:"version"`
				Publisher string   `json:"publisher"`
				Modules   []string `json:"modules"`
				Assets    []string `json:"assets"`
			} `json:"externalParameters"`
			ResolvedDependencies []digestDoc `json:"resolvedDependencies"`
		} `json:"buildDefinition"`
		RunDetails struct {
			Builder struct {
				ID      string            `json:"id"`
				Version map[string]string `json:"version"`
			} `json:"builder"`
			Metadata struct {
				StartedOn  string `json:"startedOn"`
				FinishedOn string `json:"finishedOn"`
			} `json:"metadata"`
		} `json:"runDetails"`
	} `json:"predicate"`
	Builder struct {
		ID      string `json:"id"`
		Version string `json:"version"`
	} `json:"builder"`
}

// TestBuildGeneratesSBOM: without an SBOM, Build writes a CycloneDX 1.6
// document describing the skill, each module and asset with its SHA-256,
// the tool and the clock's time, and says it generated it.
func TestBuildGeneratesSBOM(t *testing.T) {
	t.Parallel()
	in := genInput()
	built, err := artifact.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(built.Generated, []string{artifact.SBOMPath, artifact.ProvenancePath}) {
		t.Errorf("Generated = %v, want both", built.Generated)
	}
	var d sbomDoc
	if err := json.Unmarshal(built.Entries[artifact.SBOMPath], &d); err != nil {
		t.Fatalf("sbom: %v\n%s", err, built.Entries[artifact.SBOMPath])
	}
	if d.BOMFormat != "CycloneDX" || d.SpecVersion != "1.6" || d.Version != 1 {
		t.Errorf("bomFormat %q specVersion %q version %d", d.BOMFormat, d.SpecVersion, d.Version)
	}
	if !regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(d.SerialNumber) {
		t.Errorf("serialNumber %q is not a version 8 UUID URN", d.SerialNumber)
	}
	if d.Metadata.Timestamp != "2026-11-27T06:30:00Z" {
		t.Errorf("timestamp %q, want the clock's", d.Metadata.Timestamp)
	}
	if tc := d.Metadata.Tools.Components; len(tc) != 1 || tc[0].Name != artifact.BuilderID || tc[0].Version != "v1.2.3" {
		t.Errorf("tools = %+v", tc)
	}
	mc := d.Metadata.Component
	if mc.Type != "application" || mc.Name != "acme.echo" || mc.Version != "1.0.0" || mc.Publisher != "acme" || mc.BOMRef == "" {
		t.Errorf("metadata.component = %+v", mc)
	}
	want := map[string]string{ // entry -> mime type
		"modules/module.wasm":      "application/wasm",
		"modules/lib/second.wasm":  "application/wasm",
		"assets/prompts/hello.txt": "",
		"assets/LICENSE":           "",
	}
	var refs []string
	for _, c := range d.Components {
		mime, ok := want[c.Name]
		if !ok {
			t.Errorf("unexpected component %q", c.Name)
			continue
		}
		delete(want, c.Name)
		if c.Type != "file" || c.MimeType != mime {
			t.Errorf("component %s: type %q mime-type %q", c.Name, c.Type, c.MimeType)
		}
		if len(c.Hashes) != 1 || c.Hashes[0].Alg != "SHA-256" || c.Hashes[0].Content != sha(built.Entries[c.Name]) {
			t.Errorf("component %s: hashes %+v, want the SHA-256 of the entry", c.Name, c.Hashes)
		}
		refs = append(refs, c.BOMRef)
	}
	if len(want) > 0 {
		t.Errorf("components missing: %v", want)
	}
	if len(d.Dependencies) != 1 || d.Dependencies[0].Ref != mc.BOMRef || !slices.Equal(d.Dependencies[0].DependsOn, refs) {
		t.Errorf("dependencies = %+v, want the skill on %v", d.Dependencies, refs)
	}
}

// TestBuildGeneratesProvenance: without provenance, Build writes an in-toto
// Statement v1 with a SLSA Provenance v1 predicate whose subjects are the
// modules and their digests, with palyra as builder, and the top-level
// builder Palyra requires.
func TestBuildGeneratesProvenance(t *testing.T) {
	t.Parallel()
	in := genInput()
	built, err := artifact.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	var p provDoc
	if err := json.Unmarshal(built.Entries[artifact.ProvenancePath], &p); err != nil {
		t.Fatalf("provenance: %v", err)
	}
	if p.Type != "https://in-toto.io/Statement/v1" || p.PredicateType != "https://slsa.dev/provenance/v1" {
		t.Errorf("_type %q predicateType %q", p.Type, p.PredicateType)
	}
	wantSubj := []digestDoc{
		{Name: "modules/lib/second.wasm", Digest: map[string]string{"sha256": sha(in.Modules[1].Data)}},
		{Name: "modules/module.wasm", Digest: map[string]string{"sha256": sha(in.Modules[0].Data)}},
	}
	gotSubj, _ := json.Marshal(p.Subject)
	wantJSON, _ := json.Marshal(wantSubj)
	if !bytes.Equal(gotSubj, wantJSON) {
		t.Errorf("subject = %s, want %s", gotSubj, wantJSON)
	}
	bd := p.Predicate.BuildDefinition
	if bd.BuildType != artifact.BuildTypeURI || !strings.HasPrefix(bd.BuildType, "https://") {
		t.Errorf("buildType %q", bd.BuildType)
	}
	ep := bd.ExternalParameters
	if ep.SkillID != "acme.echo" || ep.Version != "1.0.0" || ep.Publisher != "acme" ||
		!slices.Equal(ep.Modules, []string{"modules/lib/second.wasm", "modules/module.wasm"}) ||
		!slices.Equal(ep.Assets, []string{"assets/LICENSE", "assets/prompts/hello.txt"}) {
		t.Errorf("externalParameters = %+v", ep)
	}
	deps, _ := json.Marshal(bd.ResolvedDependencies)
	wantDeps, _ := json.Marshal([]digestDoc{
		{Name: "skill.toml", Digest: map[string]string{"sha256": sha(in.Manifest)}},
		{Name: "assets/LICENSE", Digest: map[string]string{"sha256": sha([]byte("MIT\n"))}},
		{Name: "assets/prompts/hello.txt", Digest: map[string]string{"sha256": sha([]byte("Say hello.\n"))}},
	})
	if !bytes.Equal(deps, wantDeps) {
		t.Errorf("resolvedDependencies = %s, want %s", deps, wantDeps)
	}
	rd := p.Predicate.RunDetails
	if rd.Builder.ID != "palyra-go package build" || rd.Builder.Version["palyra-go"] != "v1.2.3" {
		t.Errorf("runDetails.builder = %+v", rd.Builder)
	}
	if rd.Metadata.StartedOn != "2026-11-27T06:30:00Z" || rd.Metadata.FinishedOn != rd.Metadata.StartedOn {
		t.Errorf("runDetails.metadata = %+v", rd.Metadata)
	}
	if p.Builder.ID != artifact.BuilderID || p.Builder.Version != "v1.2.3" {
		t.Errorf("top-level builder = %+v", p.Builder)
	}
}

// TestBuildGivenDocumentsUsedAsGiven: a given SBOM or provenance is stored
// byte for byte and only the missing one is generated; without Generate
// both are required, as in Palyra.
func TestBuildGivenDocumentsUsedAsGiven(t *testing.T) {
	t.Parallel()
	given := exampleInput()
	tests := []struct {
		name      string
		sbom      []byte
		prov      []byte
		generated []string
	}{
		{"both given", given.SBOM, given.Provenance, nil},
		{"sbom given", given.SBOM, nil, []string{artifact.ProvenancePath}},
		{"provenance given", nil, given.Provenance, []string{artifact.SBOMPath}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := genInput()
			in.SBOM, in.Provenance = tt.sbom, tt.prov
			built, err := artifact.Build(in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(built.Generated, tt.generated) {
				t.Errorf("Generated = %v, want %v", built.Generated, tt.generated)
			}
			if tt.sbom != nil && !bytes.Equal(built.Entries[artifact.SBOMPath], tt.sbom) {
				t.Errorf("the given SBOM was changed")
			}
			if tt.prov != nil && !bytes.Equal(built.Entries[artifact.ProvenancePath], tt.prov) {
				t.Errorf("the given provenance was changed")
			}
		})
	}
	in := genInput()
	in.Generate = nil
	_, err := artifact.Build(in)
	if !errors.Is(err, artifact.ErrInvalidSBOM) {
		t.Errorf("no SBOM and no Generate: err = %v, want ErrInvalidSBOM", err)
	}
	in = genInput()
	in.SBOM = []byte(`{"bomFormat":"SPDX"}`)
	if _, err := artifact.Build(in); !errors.Is(err, artifact.ErrInvalidSBOM) {
		t.Errorf("a bad given SBOM: err = %v, want ErrInvalidSBOM (given files are not replaced)", err)
	}
	for name, g := range map[string]*artifact.Generate{
		"no version": {Now: time.Now},
		"no clock":   {BuilderVersion: "v1"},
	} {
		in := genInput()
		in.Generate = g
		if _, err := artifact.Build(in); !errors.Is(err, artifact.ErrInvalidBuildInput) || errcode.Of(err) != "invalid_build_input" {
			t.Errorf("%s: err = %v, want ErrInvalidBuildInput", name, err)
		}
	}
}

// TestBuildGeneratedReproducible: with the same inputs and clock the
// artifact is byte-identical; another module changes the SBOM serial
// number and the provenance subjects, another time the timestamps.
func TestBuildGeneratedReproducible(t *testing.T) {
	t.Parallel()
	a, err := artifact.Build(genInput())
	if err != nil {
		t.Fatal(err)
	}
	b, err := artifact.Build(genInput())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes, b.Bytes) {
		t.Fatal("two builds of the same input differ")
	}
	serial := func(bt *artifact.Built) string {
		var d sbomDoc
		if err := json.Unmarshal(bt.Entries[artifact.SBOMPath], &d); err != nil {
			t.Fatal(err)
		}
		return d.SerialNumber
	}
	in := genInput()
	in.Modules[0].Data = append([]byte("\x00asm\x01\x00\x00\x00"), 0, 0, 0, 0)
	c, err := artifact.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if serial(c) == serial(a) || bytes.Equal(c.Entries[artifact.ProvenancePath], a.Entries[artifact.ProvenancePath]) {
		t.Error("another module left the serial number or the provenance unchanged")
	}
	in = genInput()
	in.Generate.Now = func() time.Time { return genClock.Add(time.Second) }
	d, err := artifact.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if serial(d) == serial(a) || !bytes.Contains(d.Entries[artifact.ProvenancePath], []byte(`"2026-11-27T06:30:01Z"`)) {
		t.Error("another time left the serial number or the provenance time unchanged")
	}
}

// allowAll trusts every publisher key, for the verification below.
type allowAll struct{}

func (allowAll) Decide(context.Context, string, ed25519.PublicKey, bool) (string, error) {
	return "allowlisted", nil
}

// TestGeneratedDocumentsPassVerifyAndAudit: the echo example, built by Go
// and packaged with generated documents, verifies (Palyra's SBOM and
// provenance checks included) and passes its audit without a single
// warning; its SBOM names the Go package and the Go modules linked in.
func TestGeneratedDocumentsPassVerifyAndAudit(t *testing.T) {
	t.Parallel()
	wasm, err := os.ReadFile(examplebuild.MustBuild(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	toml, err := os.ReadFile(filepath.Join(examplebuild.MustDir(t, "echo"), "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	in := genInput()
	in.Manifest, in.Assets = toml, nil
	in.Modules = []artifact.File{{Path: "echo.wasm", Data: wasm}}
	built, err := artifact.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := artifact.Verify(context.Background(), built.Bytes, artifact.VerifyOptions{Trust: allowAll{}})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	ar, err := audit.Audit(context.Background(), audit.Input{
		Inspection: rep.Inspection, TrustDecision: rep.TrustDecision,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !ar.Passed || len(ar.WarningChecks()) != 0 {
		t.Errorf("audit passed %v, failed %v, warnings %v", ar.Passed, ar.FailedChecks(), ar.WarningChecks())
	}
	for _, id := range []string{"sbom_presence", "provenance_presence"} {
		if !slices.ContainsFunc(ar.Checks, func(c audit.Check) bool { return c.CheckID == id && c.Status == audit.StatusPass }) {
			t.Errorf("no passing %s check", id)
		}
	}
	var d struct {
		Components []struct {
			Type       string `json:"type"`
			BOMRef     string `json:"bom-ref"`
			Name       string `json:"name"`
			PURL       string `json:"purl"`
			Properties []struct{ Name, Value string }
		} `json:"components"`
		Dependencies []struct {
			Ref       string   `json:"ref"`
			DependsOn []string `json:"dependsOn"`
		} `json:"dependencies"`
	}
	if err := json.Unmarshal(built.Entries[artifact.SBOMPath], &d); err != nil {
		t.Fatal(err)
	}
	props := map[string]string{}
	var libs []string
	for _, c := range d.Components {
		if c.Name == "modules/echo.wasm" {
			for _, p := range c.Properties {
				props[p.Name] = p.Value
			}
		}
		if c.Type == "library" {
			libs = append(libs, c.PURL)
		}
	}
	if props["go:package"] != "github.com/palyra-go/palyra/sdk/examples/echo" || props["go:build:GOOS"] != "wasip1" || props["go:build:GOARCH"] != "wasm" {
		t.Errorf("module properties %v lack the Go package and target", props)
	}
	// The main module's purl has a version when the build stamped one
	// from VCS (a clean checkout: v0.0.0-<time>-<commit>), none when it
	// could not ("(devel)").
	mainModule := func(purl string) bool {
		rest, ok := strings.CutPrefix(purl, "pkg:golang/github.com/palyra-go/palyra")
		return ok && (rest == "" || strings.HasPrefix(rest, "@"))
	}
	if !slices.ContainsFunc(libs, mainModule) {
		t.Errorf("library components %v lack the main module", libs)
	}
	if !slices.ContainsFunc(d.Dependencies, func(dep struct {
		Ref       string   `json:"ref"`
		DependsOn []string `json:"dependsOn"`
	}) bool {
		return dep.Ref == "file:modules/echo.wasm" && slices.ContainsFunc(dep.DependsOn, mainModule)
	}) {
		t.Errorf("dependencies %+v: the module does not depend on its Go module", d.Dependencies)
	}
}
