package scaffold_test

import (
	"bytes"
	"errors"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/cmd/palyra/internal/scaffold"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

// repoRoot is the checkout these tests run in.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", "..", ".."))
	if _, err := os.Stat(filepath.Join(root, "sdk", "go", "skill", "skill.go")); err != nil {
		t.Fatalf("repository root %s: %v", root, err)
	}
	return root
}

func TestWriteProjects(t *testing.T) {
	root := repoRoot(t)
	tests := []struct {
		lang, id, wantModule string
		wantFiles            []string
	}{
		{scaffold.LangGo, "acme.wordcount", "wordcount.wasm",
			[]string{".gitignore", "Makefile", "README.md", "go.mod", "main.go", "main_test.go", "skill.toml"}},
		{scaffold.LangWAT, "acme.text.word-count", "module.wasm",
			[]string{".gitignore", "Makefile", "README.md", "module.wat", "skill.toml"}},
	}
	for _, tt := range tests {
		t.Run(tt.lang, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "new", "project")
			res, err := scaffold.Write(scaffold.Options{SkillID: tt.id, Lang: tt.lang, Dir: dir, SDKDir: root})
			if err != nil {
				t.Fatal(err)
			}
			if res.Dir != dir || res.Module != tt.wantModule || res.ToolID != tt.id+".count" || !slices.Equal(res.Files, tt.wantFiles) {
				t.Errorf("result %+v", res)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != len(tt.wantFiles) {
				t.Errorf("%d entries in %s, want %d", len(entries), dir, len(tt.wantFiles))
			}
			raw, err := os.ReadFile(filepath.Join(dir, "skill.toml"))
			if err != nil {
				t.Fatal(err)
			}
			m, err := manifest.Parse(raw)
			if err != nil {
				t.Fatalf("skill.toml does not parse: %v", err)
			}
			if m.SkillID != tt.id || m.Publisher != "acme" || len(m.Entrypoints.Tools) != 1 || m.Entrypoints.Tools[0].ID != tt.id+".count" ||
				m.Entrypoints.Tools[0].Name != "count" || m.Operator.Plugin == nil || m.Operator.Plugin.DefaultToolID != tt.id+".count" {
				t.Errorf("manifest %+v", m)
			}
			if c := m.Capabilities; len(c.HTTPEgressAllowlist)+len(c.Secrets)+len(c.Channels)+len(c.Filesystem.WriteRoots)+len(c.Filesystem.ReadRoots) != 0 {
				t.Errorf("capabilities %+v, want none", c)
			}
			// Every top-level field of the manifest is in the file, set or
			// commented out.
			for _, key := range []string{"manifest_version", "skill_id", "name", "version", "publisher", "[[entrypoints.tools]]",
				"input_schema", "output_schema", "[entrypoints.tools.risk]", "http_egress_allowlist", "channels", "device_capabilities",
				"node_capabilities", "[capabilities.filesystem]", "[[capabilities.secrets]]", "[capabilities.wildcard_opt_in]",
				"[capabilities.quotas]", "[compat]", "max_palyra_version", "[operator]", "docs_url", "[operator.plugin]",
				"default_module_path", "[operator.config]", "[builder]", "[integrity]"} {
				if !bytes.Contains(raw, []byte(key)) {
					t.Errorf("skill.toml lacks %s", key)
				}
			}
			for _, name := range res.Files {
				b, _ := os.ReadFile(filepath.Join(dir, name))
				if bytes.Contains(b, []byte("<no value>")) || bytes.Contains(b, []byte("{{")) {
					t.Errorf("%s: template left unrendered:\n%s", name, b)
				}
				if strings.HasSuffix(name, ".go") {
					if formatted, err := format.Source(b); err != nil || !bytes.Equal(formatted, b) {
						t.Errorf("%s is not gofmt'd (%v)", name, err)
					}
				}
			}
			mk, _ := os.ReadFile(filepath.Join(dir, "Makefile"))
			if !bytes.Contains(mk, []byte("\n\t")) || bytes.Contains(mk, []byte("\n        ")) {
				t.Error("Makefile recipes are not tab-indented")
			}
			if tt.lang == scaffold.LangGo {
				gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
				if !bytes.Contains(gomod, []byte("module "+tt.id+"\n")) || !bytes.Contains(gomod, []byte("replace github.com/palyra-go/palyra => "+root+"\n")) {
					t.Errorf("go.mod:\n%s", gomod)
				}
				src, _ := os.ReadFile(filepath.Join(dir, "main.go"))
				if bytes.HasPrefix(src, []byte("//go:build")) || bytes.Contains(src, []byte("\n//go:build")) {
					t.Error("main.go has a build constraint: go test would not see its handler")
				}
			}
		})
	}
}

// TestGoProjectTestsNatively runs the new Go project's own test with plain
// go test, outside the repository's go.work, against the checkout its
// go.mod names: the test must pass and must have run TestCount.
func TestGoProjectTestsNatively(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	dir := filepath.Join(t.TempDir(), "wc")
	if _, err := scaffold.Write(scaffold.Options{SkillID: "acme.wordcount", Dir: dir, SDKDir: repoRoot(t)}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), goBin, "test", "-count=1", "-v", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test in the new project: %v\n%s", err, out)
	}
	for _, want := range []string{"--- PASS: TestCount", "--- PASS: TestUnknownTool"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("go test output lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteRefuses(t *testing.T) {
	root := repoRoot(t)
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	otherMod := t.TempDir()
	if err := os.WriteFile(filepath.Join(otherMod, "go.mod"), []byte("module example.com/other\n\ngo 1.24\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts scaffold.Options
		want error
		code string
	}{
		{"empty id", scaffold.Options{SkillID: ""}, scaffold.ErrInvalidSkillID, "invalid_skill_id"},
		{"no publisher segment", scaffold.Options{SkillID: "wordcount"}, scaffold.ErrInvalidSkillID, "invalid_skill_id"},
		{"upper case", scaffold.Options{SkillID: "Acme.wordcount"}, scaffold.ErrInvalidSkillID, "invalid_skill_id"},
		{"empty segment", scaffold.Options{SkillID: "acme..wordcount"}, scaffold.ErrInvalidSkillID, "invalid_skill_id"},
		{"colon", scaffold.Options{SkillID: "acme.word:count"}, scaffold.ErrInvalidSkillID, "invalid_skill_id"},
		{"space", scaffold.Options{SkillID: "acme.word count"}, scaffold.ErrInvalidSkillID, "invalid_skill_id"},
		{"non-ascii", scaffold.Options{SkillID: "acme.wörd"}, scaffold.ErrInvalidSkillID, "invalid_skill_id"},
		{"quote", scaffold.Options{SkillID: `acme.x"`}, scaffold.ErrInvalidSkillID, "invalid_skill_id"},
		{"unknown lang", scaffold.Options{SkillID: "acme.wc", Lang: "rust", SDKDir: root}, scaffold.ErrUnknownLang, "unknown_lang"},
		{"go without sdk", scaffold.Options{SkillID: "acme.wc"}, scaffold.ErrSDKNotFound, "sdk_not_found"},
		{"sdk is another module", scaffold.Options{SkillID: "acme.wc", SDKDir: otherMod}, scaffold.ErrSDKNotFound, "sdk_not_found"},
		{"sdk missing", scaffold.Options{SkillID: "acme.wc", SDKDir: filepath.Join(otherMod, "none")}, scaffold.ErrSDKNotFound, "sdk_not_found"},
		{"bad go module", scaffold.Options{SkillID: "acme.wc", SDKDir: root, GoModule: "has space"}, scaffold.ErrInvalidGoModule, "invalid_go_module"},
		{"dir not empty", scaffold.Options{SkillID: "acme.wc", SDKDir: root, Dir: full}, scaffold.ErrDirNotEmpty, "dir_not_empty"},
		{"dir not empty, wat", scaffold.Options{SkillID: "acme.wc", Lang: scaffold.LangWAT, Dir: full}, scaffold.ErrDirNotEmpty, "dir_not_empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.Dir == "" {
				tt.opts.Dir = filepath.Join(t.TempDir(), "p")
			}
			res, err := scaffold.Write(tt.opts)
			if !errors.Is(err, tt.want) || errcode.Of(err) != tt.code {
				t.Fatalf("err %v (code %q), want %v (%s); result %+v", err, errcode.Of(err), tt.want, tt.code, res)
			}
			if tt.opts.Dir != full {
				if _, err := os.Stat(tt.opts.Dir); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a refused project left %s behind (%v)", tt.opts.Dir, err)
				}
			}
		})
	}
	entries, _ := os.ReadDir(full)
	if len(entries) != 1 {
		t.Errorf("the non-empty dir now holds %d entries", len(entries))
	}
}

func TestWriteIntoEmptyDirAndDefaults(t *testing.T) {
	dir := t.TempDir() // exists, empty
	res, err := scaffold.Write(scaffold.Options{SkillID: "acme.wc", Dir: dir, SDKDir: repoRoot(t), GoModule: "example.com/acme/wc"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lang != scaffold.LangGo {
		t.Errorf("lang %q, want go by default", res.Lang)
	}
	gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	if !bytes.HasPrefix(gomod, []byte("module example.com/acme/wc\n")) {
		t.Errorf("go.mod:\n%s", gomod)
	}
	// A second run into the now full dir is refused and changes nothing.
	if _, err := scaffold.Write(scaffold.Options{SkillID: "acme.wc", Dir: dir, SDKDir: repoRoot(t)}); !errors.Is(err, scaffold.ErrDirNotEmpty) {
		t.Fatalf("second write: %v", err)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	if !bytes.Equal(again, gomod) {
		t.Error("the refused write changed go.mod")
	}
}

func TestFindSourceTree(t *testing.T) {
	root := repoRoot(t)
	if got := scaffold.FindSourceTree(); got != root {
		t.Errorf("from this package's sources: %q, want %q", got, root)
	}
	// Without the compiled-in path: the walk up from a directory inside
	// the checkout finds it, and from elsewhere finds nothing.
	if got := scaffold.FindFrom(filepath.Join(root, "sdk", "go", "skill")); got != root {
		t.Errorf("from sdk/go/skill: %q, want %q", got, root)
	}
	if got := scaffold.FindFrom(t.TempDir(), filepath.Join(t.TempDir(), "missing")); got != "" {
		t.Errorf("from a temporary directory: %q, want none", got)
	}
}
