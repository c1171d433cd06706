package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeProject writes a skill project: files maps a path below the
// project directory to its content; a value starting with "@" copies that
// file of the example vector.
func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "wordcount")
	for name, content := range files {
		data := []byte(content)
		if src, ok := strings.CutPrefix(content, "@"); ok {
			var err error
			if data, err = os.ReadFile(mustAbs(example + "/" + src)); err != nil {
				t.Fatal(err)
			}
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// zipEntries reads every entry of an artifact.
func zipEntries(t *testing.T, path string) map[string][]byte {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = b
	}
	return out
}

// TestPackageBuildDir: --dir finds skill.toml, the modules at the top and
// under modules/, the assets under assets/ (not hidden files), generates
// the SBOM and provenance it does not find, names the artifact after the
// skill, and the artifact verifies; documents found in the directory or
// given by flag are used as given.
func TestPackageBuildDir(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1730000000")
	tests := []struct {
		name      string
		files     map[string]string
		extra     []string
		output    string // "" for the default
		modules   []string
		assets    []string
		generated []string
	}{
		{
			name: "nothing but the manifest and modules",
			files: map[string]string{
				"skill.toml": "@skill.toml", "module.wasm": "@module.wasm", "modules/lib/helper.wasm": "@module.wasm",
				"assets/prompt.txt": "@assets/prompt.txt", "assets/.DS_Store": "x", "main.go": "package main", "notes.wasm.txt": "x",
			},
			modules:   []string{"modules/lib/helper.wasm", "modules/module.wasm"},
			assets:    []string{"assets/prompt.txt"},
			generated: []string{"sbom.cdx.json", "provenance.json"},
		},
		{
			name: "documents in the directory",
			files: map[string]string{
				"skill.toml": "@skill.toml", "module.wasm": "@module.wasm",
				"sbom.cdx.json": "@sbom.cdx.json", "provenance.json": "@provenance.json",
			},
			modules:   []string{"modules/module.wasm"},
			assets:    []string{},
			generated: []string{},
		},
		{
			name:      "flags win over the directory",
			files:     map[string]string{"skill.toml": "@skill.toml", "module.wasm": "@module.wasm", "other.wasm": "@module.wasm"},
			extra:     []string{"--module", mustAbs(example + "/module.wasm"), "--sbom", mustAbs(example + "/sbom.cdx.json")},
			output:    "out/x.palyra-skill",
			modules:   []string{"modules/module.wasm"},
			assets:    []string{},
			generated: []string{"provenance.json"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeProject(t, tt.files)
			args := append([]string{"skills", "package", "build", "--json", "--dir", dir, "--signing-key-stdin"}, tt.extra...)
			want := filepath.Join(dir, "acme.echo_http-1.0.0.palyra-skill")
			if tt.output != "" {
				want = filepath.Join(t.TempDir(), tt.output)
				if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--output", want)
			}
			var rep buildReport
			cli(t, t.TempDir(), seed01, args...).decode(t, &rep)
			if rep.ArtifactPath != want || rep.SkillID != "acme.echo_http" {
				t.Errorf("artifact %s skill %s, want %s", rep.ArtifactPath, rep.SkillID, want)
			}
			if !slices.Equal(rep.Modules, tt.modules) || !slices.Equal(rep.Assets, tt.assets) || !slices.Equal(rep.Generated, tt.generated) {
				t.Errorf("modules %v assets %v generated %v, want %v %v %v", rep.Modules, rep.Assets, rep.Generated, tt.modules, tt.assets, tt.generated)
			}
			entries := zipEntries(t, want)
			for _, doc := range []string{"sbom.cdx.json", "provenance.json"} {
				given := !slices.Contains(tt.generated, doc)
				orig, _ := os.ReadFile(mustAbs(example + "/" + doc))
				if given != bytes.Equal(entries[doc], orig) {
					t.Errorf("%s: given %v, but equal to the example's: %v", doc, given, !given)
				}
			}
			var ver struct {
				Accepted bool `json:"accepted"`
			}
			cli(t, t.TempDir(), "", "skills", "package", "verify", "--json", "--artifact", want, "--trusted-publisher", "acme="+echoPub).decode(t, &ver)
			if !ver.Accepted {
				t.Error("the artifact does not verify")
			}
			// Reproducible with $SOURCE_DATE_EPOCH, generated documents included.
			first, _ := os.ReadFile(want)
			cli(t, t.TempDir(), seed01, args...).decode(t, &rep)
			again, _ := os.ReadFile(want)
			if !bytes.Equal(first, again) {
				t.Error("a second build of the same project differs")
			}
		})
	}
}

// TestPackageBuildDirText: the text report names the generated documents
// and the manifest's warnings; --json carries the same warnings.
func TestPackageBuildDirText(t *testing.T) {
	manifest := strings.Replace(problemsManifestOK, "[compat]", "[operator]\nsummary = \"Counts.\"\n\n[compat]", 1)
	dir := writeProject(t, map[string]string{"skill.toml": manifest, "module.wasm": "@module.wasm"})
	r := cli(t, t.TempDir(), seed01, "skills", "package", "build", "--dir", dir, "--signing-key-stdin")
	if r.code != exitOK || !strings.Contains(r.stdout, " generated=sbom.cdx.json,provenance.json") || !strings.Contains(r.stdout, " modules=modules/module.wasm ") ||
		!strings.Contains(r.stdout, "\n  warning missing_operator_display_name: ") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	var rep buildReport
	cli(t, t.TempDir(), seed01, "skills", "package", "build", "--json", "--dir", dir, "--signing-key-stdin").decode(t, &rep)
	if len(rep.Warnings) != 1 || rep.Warnings[0].Code != "missing_operator_display_name" {
		t.Fatalf("warnings = %+v", rep.Warnings)
	}
}

// problemsManifestOK is a valid manifest without operator metadata.
const problemsManifestOK = `skill_id = "acme.wordcount"
name = "Word count"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.count"
name = "count"
description = "Counts words."
input_schema = { type = "object" }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`

// TestPackageBuildDirErrors: what --dir cannot find is named, and without
// --dir the file flags are required.
func TestPackageBuildDirErrors(t *testing.T) {
	noModule := writeProject(t, map[string]string{"skill.toml": "@skill.toml", "main.go": "package main"})
	noManifest := writeProject(t, map[string]string{"module.wasm": "@module.wasm"})
	tests := []struct {
		name, code string
		args       []string
		say        string
	}{
		{"no module", "manifest_validation", []string{"--dir", noModule}, "no module in " + noModule},
		{"no manifest", "io_error", []string{"--dir", noManifest}, "no skill.toml in " + noManifest + ": palyra skills new"},
		{"no directory", "io_error", []string{"--dir", filepath.Join(noModule, "nope")}, "nope"},
		{"a file as directory", "usage", []string{"--dir", filepath.Join(noModule, "main.go")}, "is not a directory"},
		{"no dir and no files", "usage", []string{"--manifest", mustAbs(example + "/skill.toml")}, "--dir DIR (a skill project), or --module, --output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"skills", "package", "build", "--json", "--signing-key-stdin"}, tt.args...)
			r := cli(t, t.TempDir(), seed01, args...)
			if r.code == exitOK || r.errorCode(t) != tt.code || !strings.Contains(r.stdout, tt.say) {
				t.Fatalf("exit %d stdout %s; want %s saying %q", r.code, r.stdout, tt.code, tt.say)
			}
		})
	}
}

// TestPackageBuildListsEveryProblem: a manifest with several problems
// fails one build that lists them all: one line each in text, each in the
// JSON error's details.
func TestPackageBuildListsEveryProblem(t *testing.T) {
	manifest := `skill_id = "Acme Wordcount"
version = "1.0"
publisher = "acme"
colour = "red"

[[entrypoints.tools]]
id = "acme.count"
name = "count"
description = "Counts words."
input_schema = { type = "objekt" }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`
	dir := writeProject(t, map[string]string{"skill.toml": manifest, "module.wasm": "@module.wasm"})
	r := cli(t, t.TempDir(), seed01, "skills", "package", "build", "--dir", dir, "--signing-key-stdin")
	wantLines := []string{
		"palyra: artifact: skill.toml: manifest: 5 problems [manifest_parse]",
		"  - colour (line 4): unknown key [manifest_parse]",
		"  - name: missing required key [manifest_parse]",
		"  - skill_id (line 1): must contain only",
		"  - version (line 2): invalid version \"1.0\"",
		"  - entrypoints.tools[0].input_schema (line 10): not a valid JSON Schema",
	}
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if r.code != exitFailure || len(lines) != len(wantLines) {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for i, w := range wantLines {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
	r = cli(t, t.TempDir(), seed01, "skills", "package", "build", "--json", "--dir", dir, "--signing-key-stdin")
	var rep struct {
		Error struct {
			Code    string `json:"code"`
			Details struct {
				Problems []struct {
					Code, Path, Reason string
					Line               int
				} `json:"problems"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	var paths []string
	for _, p := range rep.Error.Details.Problems {
		paths = append(paths, p.Path)
	}
	if rep.Error.Code != "manifest_parse" || !slices.Equal(paths, []string{"colour", "name", "skill_id", "version", "entrypoints.tools[0].input_schema"}) {
		t.Fatalf("code %s problems %v", rep.Error.Code, paths)
	}
	if _, err := os.Stat(filepath.Join(dir, "acme.count-1.0.palyra-skill")); err == nil {
		t.Error("a failed build wrote an artifact")
	}
}
