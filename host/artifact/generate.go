package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/manifest"
)

// The identity of the generated documents. BuilderID names the program in
// both; BuildTypeURI names how it builds (documented in docs/skill-toml.md,
// "Generated SBOM and provenance").
const (
	// BuilderID is the provenance builder id and the SBOM tool name.
	BuilderID = "palyra-go package build"
	// BuildTypeURI is the SLSA buildType of generated provenance: a
	// packaging of the given modules and assets under skill.toml, with no
	// compilation.
	BuildTypeURI = "https://github.com/palyra-go/palyra/blob/main/docs/skill-toml.md#build-type-package-build-v1"
	// CycloneDXSpecVersion is the specVersion of a generated SBOM.
	CycloneDXSpecVersion = "1.6"
	// InTotoStatementType is the _type of generated provenance.
	InTotoStatementType = "https://in-toto.io/Statement/v1"
	// SLSAProvenanceType is the predicateType of generated provenance.
	SLSAProvenanceType = "https://slsa.dev/provenance/v1"
)

// Generate asks Build to write sbom.cdx.json and provenance.json itself
// when BuildInput leaves them nil. A document given in BuildInput is
// always used as given.
type Generate struct {
	// BuilderVersion is the version of the program that builds (palyra's
	// version), recorded as the SBOM tool's and the provenance builder's
	// version. Required.
	BuilderVersion string
	// Now is the clock the generated documents read their timestamps from
	// (SBOM metadata.timestamp, provenance startedOn and finishedOn), once
	// per Build. Required; give a fixed clock for reproducible bytes.
	Now func() time.Time
}

func (g *Generate) check() error {
	if strings.TrimSpace(g.BuilderVersion) == "" {
		return &Error{Err: ErrInvalidBuildInput, Detail: "Generate.BuilderVersion is not set"}
	}
	if g.Now == nil {
		return &Error{Err: ErrInvalidBuildInput, Detail: "Generate.Now is not set"}
	}
	return nil
}

// described is one module or asset entry as the generated documents see it.
type described struct {
	entry  string // artifact entry path: modules/... or assets/...
	sha256 string
	module bool
	goInfo *debug.BuildInfo // a module built by Go: its embedded build information
}

func describe(entries map[string][]byte) []described {
	var out []described
	for _, name := range sortedNames(entries) {
		module := strings.HasPrefix(name, "modules/")
		if !module && !strings.HasPrefix(name, "assets/") {
			continue
		}
		d := described{entry: name, sha256: sha256Hex(entries[name]), module: module}
		if module {
			d.goInfo = goBuildInfo(entries[name])
		}
		out = append(out, d)
	}
	return out
}

// The sentinels around the module information the Go linker embeds in
// every binary, wasm included (the runtime's modinfo string; the same
// bytes debug.ReadBuildInfo reads in a running program).
var (
	goInfoStart = []byte("\x30\x77\xaf\x0c\x92\x74\x08\x02\x41\xe1\xc1\x07\xe6\xd6\x18\xe6")
	goInfoEnd   = []byte("\xf9\x32\x43\x31\x86\x18\x20\x72\x00\x82\x42\x10\x41\x16\xd8\xf2")
)

// goBuildInfo returns the build information a Go-built wasm module
// carries (main package, modules, build settings), or nil for a module
// built otherwise. It only looks for the linker's sentinels; nothing is
// executed.
func goBuildInfo(wasm []byte) *debug.BuildInfo {
	i := bytes.Index(wasm, goInfoStart)
	if i < 0 {
		return nil
	}
	rest := wasm[i+len(goInfoStart):]
	j := bytes.Index(rest, goInfoEnd)
	if j < 0 {
		return nil
	}
	bi, err := debug.ParseBuildInfo(string(rest[:j]))
	if err != nil || bi.Main.Path == "" {
		return nil
	}
	return bi
}

// goBuildSettings are the build settings a generated SBOM records; others
// (-ldflags, -gcflags, CGO_* flags) may carry local paths or values.
var goBuildSettings = []string{"-buildmode", "-compiler", "-trimpath", "CGO_ENABLED", "GOARCH", "GOOS", "vcs", "vcs.revision", "vcs.time", "vcs.modified"}

// CycloneDX JSON, the parts a generated SBOM uses.
type (
	cdxBOM struct {
		BOMFormat    string          `json:"bomFormat"`
		SpecVersion  string          `json:"specVersion"`
		SerialNumber string          `json:"serialNumber"`
		Version      int             `json:"version"`
		Metadata     cdxMetadata     `json:"metadata"`
		Components   []cdxComponent  `json:"components"`
		Dependencies []cdxDependency `json:"dependencies"`
	}
	cdxMetadata struct {
		Timestamp string       `json:"timestamp"`
		Tools     cdxTools     `json:"tools"`
		Component cdxComponent `json:"component"`
	}
	cdxTools struct {
		Components []cdxComponent `json:"components"`
	}
	cdxComponent struct {
		Type        string        `json:"type"`
		BOMRef      string        `json:"bom-ref,omitempty"`
		Name        string        `json:"name"`
		Version     string        `json:"version,omitempty"`
		Publisher   string        `json:"publisher,omitempty"`
		Description string        `json:"description,omitempty"`
		MimeType    string        `json:"mime-type,omitempty"`
		PURL        string        `json:"purl,omitempty"`
		Hashes      []cdxHash     `json:"hashes,omitempty"`
		Properties  []cdxProperty `json:"properties,omitempty"`
	}
	cdxHash struct {
		Alg     string `json:"alg"`
		Content string `json:"content"`
	}
	cdxProperty struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	cdxDependency struct {
		Ref       string   `json:"ref"`
		DependsOn []string `json:"dependsOn"`
	}
)

// generateSBOM writes a CycloneDX 1.6 JSON SBOM of the skill: the skill as
// metadata.component, each module (application/wasm) and asset as a file
// component with its SHA-256, the skill depending on all of them, and
// palyra as the tool. A module built by Go also lists its main package and
// build settings, and depends on the Go modules linked into it (read from
// the build information the Go linker embeds), each a library component
// with its package URL. The serial number is derived from the content and
// the time, so the same inputs give the same bytes.
func generateSBOM(m *manifest.Manifest, files []described, g *Generate, at time.Time) ([]byte, error) {
	skillRef := "skill:" + strings.TrimSpace(m.SkillID) + "@" + strings.TrimSpace(m.Version)
	bom := cdxBOM{
		BOMFormat:   "CycloneDX",
		SpecVersion: CycloneDXSpecVersion,
		Version:     1,
		Metadata: cdxMetadata{
			Timestamp: at.UTC().Format(time.RFC3339),
			Tools: cdxTools{Components: []cdxComponent{{
				Type: "application", Name: BuilderID, Version: g.BuilderVersion,
			}}},
			Component: cdxComponent{
				Type:        "application",
				BOMRef:      skillRef,
				Name:        strings.TrimSpace(m.SkillID),
				Version:     strings.TrimSpace(m.Version),
				Publisher:   strings.TrimSpace(m.Publisher),
				Description: skillDescription(m),
				Properties:  []cdxProperty{{Name: "palyra:skill_name", Value: m.Name}},
			},
		},
		Components:   []cdxComponent{},
		Dependencies: []cdxDependency{{Ref: skillRef, DependsOn: []string{}}},
	}
	goRefs := map[string]bool{}
	var goComponents []cdxComponent
	var goDeps []cdxDependency
	for _, f := range files {
		c := cdxComponent{
			Type:       "file",
			BOMRef:     "file:" + f.entry,
			Name:       f.entry,
			Hashes:     []cdxHash{{Alg: "SHA-256", Content: f.sha256}},
			Properties: []cdxProperty{{Name: "palyra:entry_kind", Value: "asset"}},
		}
		if f.module {
			c.MimeType = "application/wasm"
			c.Properties[0].Value = "module"
		}
		if bi := f.goInfo; bi != nil {
			c.Properties = append(c.Properties, cdxProperty{Name: "go:package", Value: bi.Path})
			for _, key := range goBuildSettings {
				for _, st := range bi.Settings {
					if st.Key == key {
						c.Properties = append(c.Properties, cdxProperty{Name: "go:build:" + key, Value: st.Value})
					}
				}
			}
			dep := cdxDependency{Ref: c.BOMRef, DependsOn: []string{}}
			for _, m := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
				gc := goModuleComponent(m)
				dep.DependsOn = append(dep.DependsOn, gc.BOMRef)
				if !goRefs[gc.BOMRef] {
					goRefs[gc.BOMRef] = true
					goComponents = append(goComponents, gc)
				}
			}
			goDeps = append(goDeps, dep)
		}
		bom.Components = append(bom.Components, c)
		bom.Dependencies[0].DependsOn = append(bom.Dependencies[0].DependsOn, c.BOMRef)
	}
	bom.Components = append(bom.Components, goComponents...)
	bom.Dependencies = append(bom.Dependencies, goDeps...)
	bom.SerialNumber = serialNumber(skillRef, files, bom.Metadata.Timestamp, g.BuilderVersion)
	return marshalDoc(bom, SBOMPath)
}

// goModuleComponent describes a Go module linked into a module: a library
// with its package URL and go.sum hash. A module replaced by another
// version is listed as the replacement; one replaced by a local directory
// keeps its own path and is marked, without the directory.
func goModuleComponent(m *debug.Module) cdxComponent {
	c := cdxComponent{Type: "library", Name: m.Path, Version: m.Version}
	if r := m.Replace; r != nil {
		if r.Version != "" {
			c.Name, c.Version = r.Path, r.Version
			c.Properties = append(c.Properties, cdxProperty{Name: "go:replaces", Value: m.Path + goAt(m.Version)})
		} else {
			c.Version = "" // the code came from a directory, not from this version
			c.Properties = append(c.Properties, cdxProperty{Name: "go:replaced_by", Value: "local directory"})
		}
		m = r
	}
	if c.Version == "(devel)" {
		c.Version = ""
	}
	c.PURL = "pkg:golang/" + c.Name + goAt(c.Version)
	c.BOMRef = c.PURL
	if m.Sum != "" {
		c.Properties = append(c.Properties, cdxProperty{Name: "go:sum", Value: m.Sum})
	}
	return c
}

func goAt(version string) string {
	if version == "" || version == "(devel)" {
		return ""
	}
	return "@" + version
}

// skillDescription is the operator summary, else the skill's name.
func skillDescription(m *manifest.Manifest) string {
	if s := strings.TrimSpace(m.Operator.Summary); s != "" {
		return s
	}
	return strings.TrimSpace(m.Name)
}

// serialNumber is an RFC 9562 version 8 UUID URN whose bits come from
// SHA-256 over what the SBOM describes, so a rebuild of the same inputs at
// the same time gives the same serial number and different ones differ.
func serialNumber(skillRef string, files []described, timestamp, builderVersion string) string {
	h := sha256.New()
	for _, s := range []string{"palyra.sbom.serial.v1", skillRef, timestamp, builderVersion} {
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	for _, f := range files {
		fmt.Fprintf(h, "%d:%s %s\n", len(f.entry), f.entry, f.sha256)
	}
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	x := hex.EncodeToString(u)
	return "urn:uuid:" + x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// in-toto Statement v1 with a SLSA Provenance v1 predicate. Builder is not
// part of the statement: Palyra requires a top-level builder object in
// provenance.json, and in-toto consumers ignore fields they do not know.
type (
	provStatement struct {
		Type          string          `json:"_type"`
		Subject       []provSubject   `json:"subject"`
		PredicateType string          `json:"predicateType"`
		Predicate     provPredicate   `json:"predicate"`
		Builder       provBuilderInfo `json:"builder"`
	}
	provSubject struct {
		Name   string            `json:"name"`
		Digest map[string]string `json:"digest"`
	}
	provPredicate struct {
		BuildDefinition provBuildDefinition `json:"buildDefinition"`
		RunDetails      provRunDetails      `json:"runDetails"`
	}
	provBuildDefinition struct {
		BuildType            string         `json:"buildType"`
		ExternalParameters   provExternal   `json:"externalParameters"`
		InternalParameters   map[string]any `json:"internalParameters"`
		ResolvedDependencies []provSubject  `json:"resolvedDependencies"`
	}
	provExternal struct {
		SkillID   string   `json:"skill_id"`
		Version   string   `json:"version"`
		Publisher string   `json:"publisher"`
		Modules   []string `json:"modules"`
		Assets    []string `json:"assets"`
	}
	provRunDetails struct {
		Builder  provBuilder  `json:"builder"`
		Metadata provMetadata `json:"metadata"`
	}
	provBuilder struct {
		ID      string            `json:"id"`
		Version map[string]string `json:"version"`
	}
	provMetadata struct {
		StartedOn  string `json:"startedOn"`
		FinishedOn string `json:"finishedOn"`
	}
	provBuilderInfo struct {
		ID      string `json:"id"`
		Version string `json:"version"`
	}
)

// generateProvenance writes an in-toto Statement v1 whose subjects are the
// modules (entry path and SHA-256) and whose SLSA Provenance v1 predicate
// records the skill, the modules and assets packaged, skill.toml as
// written and the assets as resolved dependencies, and palyra as the
// builder.
func generateProvenance(m *manifest.Manifest, manifestTOML []byte, files []described, g *Generate, at time.Time) ([]byte, error) {
	ts := at.UTC().Format(time.RFC3339)
	st := provStatement{
		Type:          InTotoStatementType,
		PredicateType: SLSAProvenanceType,
		Predicate: provPredicate{
			BuildDefinition: provBuildDefinition{
				BuildType: BuildTypeURI,
				ExternalParameters: provExternal{
					SkillID:   strings.TrimSpace(m.SkillID),
					Version:   strings.TrimSpace(m.Version),
					Publisher: strings.TrimSpace(m.Publisher),
					Modules:   []string{},
					Assets:    []string{},
				},
				InternalParameters: map[string]any{},
				ResolvedDependencies: []provSubject{{
					Name: ManifestPath, Digest: map[string]string{"sha256": sha256Hex(manifestTOML)},
				}},
			},
			RunDetails: provRunDetails{
				Builder:  provBuilder{ID: BuilderID, Version: map[string]string{"palyra-go": g.BuilderVersion}},
				Metadata: provMetadata{StartedOn: ts, FinishedOn: ts},
			},
		},
		Builder: provBuilderInfo{ID: BuilderID, Version: g.BuilderVersion},
	}
	ext := &st.Predicate.BuildDefinition.ExternalParameters
	for _, f := range files {
		d := provSubject{Name: f.entry, Digest: map[string]string{"sha256": f.sha256}}
		if f.module {
			st.Subject = append(st.Subject, d)
			ext.Modules = append(ext.Modules, f.entry)
			continue
		}
		ext.Assets = append(ext.Assets, f.entry)
		st.Predicate.BuildDefinition.ResolvedDependencies = append(st.Predicate.BuildDefinition.ResolvedDependencies, d)
	}
	return marshalDoc(st, ProvenancePath)
}

func marshalDoc(v any, name string) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("artifact: generate %s: %w", name, err)
	}
	return append(b, '\n'), nil
}
