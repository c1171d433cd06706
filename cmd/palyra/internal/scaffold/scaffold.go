package scaffold

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"text/template"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

// SDKModule is the Go module that holds the Go guest SDK (sdk/go/skill).
const SDKModule = "github.com/palyra-go/palyra"

// The languages of a new project.
const (
	// LangGo is a Go module on the Go guest SDK.
	LangGo = "go"
	// LangWAT is a module written in WebAssembly text.
	LangWAT = "wat"
)

// Langs lists the languages Write knows, in the order help shows them.
func Langs() []string { return []string{LangGo, LangWAT} }

var (
	// ErrInvalidSkillID: the skill id breaks the manifest's rule, or has no
	// publisher segment.
	ErrInvalidSkillID = errcode.New("invalid_skill_id", "invalid skill id")
	// ErrDirNotEmpty: the project directory exists and holds something.
	ErrDirNotEmpty = errcode.New("dir_not_empty", "directory is not empty")
	// ErrUnknownLang: the language is not one of Langs.
	ErrUnknownLang = errcode.New("unknown_lang", "unknown skill language")
	// ErrInvalidGoModule: the Go module path is not one the go command takes.
	ErrInvalidGoModule = errcode.New("invalid_go_module", "invalid Go module path")
	// ErrSDKNotFound: no checkout of SDKModule was given or found for a Go
	// project.
	ErrSDKNotFound = errcode.New("sdk_not_found", "Go SDK checkout not found")
)

// Options says what project Write makes.
type Options struct {
	// SkillID is the new skill's id: publisher.name[.more], each segment of
	// a-z, 0-9, '_' and '-'. The first segment is the publisher.
	SkillID string
	// Lang is LangGo (the default when empty) or LangWAT.
	Lang string
	// Dir is the project directory: created when missing, refused when not
	// empty. Empty means the skill id's last segment, in the working
	// directory.
	Dir string
	// SDKDir is the root of a checkout of SDKModule (the directory of its
	// go.mod), written into go.mod's replace line as an absolute path.
	// Required for LangGo; for LangWAT it only gives the Makefile a
	// converter for when WABT is missing.
	SDKDir string
	// GoModule is the module path of a Go project; empty means the skill id.
	GoModule string
}

// Result is what Write made.
type Result struct {
	// Dir is the project directory, absolute.
	Dir string `json:"dir"`
	// Files are the files written, relative to Dir, sorted.
	Files []string `json:"files"`
	// SkillID, ToolID and Lang describe the project.
	SkillID string `json:"skill_id"`
	ToolID  string `json:"tool_id"`
	Lang    string `json:"lang"`
	// Module is the WebAssembly module the build command writes, relative
	// to Dir.
	Module string `json:"module"`
	// SDKDir is the checkout go.mod's replace line names ("" for WAT
	// projects without one).
	SDKDir string `json:"sdk_dir,omitempty"`
	// BuildCommand builds Module, run in Dir.
	BuildCommand string `json:"build_command"`
}

//go:embed templates
var templates embed.FS

// skillIDPattern is the manifest's skill_id rule with at least two segments,
// so that the first can be the publisher.
var skillIDPattern = regexp.MustCompile(`^[a-z0-9_-]+(\.[a-z0-9_-]+)+$`)

// data is what the templates see.
type data struct {
	SkillID, Publisher, Name, Title, ToolID, Lang string
	Module, Artifact, BuildCommand                string
	GoModule, GoVersion, SDKDir, SourceDir        string
	Fuel                                          int
}

// Write makes the project that opts describe and returns what it wrote.
func Write(opts Options) (*Result, error) {
	d, err := prepare(opts)
	if err != nil {
		return nil, err
	}
	files, err := render(d)
	if err != nil {
		return nil, err
	}
	// The manifest must parse before anything is written: the same rules
	// as package build, so a project never starts broken.
	if _, err := manifest.Parse(files["skill.toml"]); err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrInvalidSkillID, opts.SkillID, err)
	}
	dir := opts.Dir
	if dir == "" {
		dir = d.Name
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("project directory %s: %w", dir, err)
	}
	created, err := makeDir(abs)
	if err != nil {
		return nil, err
	}
	res := &Result{Dir: abs, SkillID: d.SkillID, ToolID: d.ToolID, Lang: d.Lang, Module: d.Module, SDKDir: d.SDKDir, BuildCommand: d.BuildCommand}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := writeNew(filepath.Join(abs, name), files[name]); err != nil {
			undo(abs, created, res.Files)
			return nil, err
		}
		res.Files = append(res.Files, name)
	}
	return res, nil
}

// prepare checks opts and computes the template data.
func prepare(opts Options) (*data, error) {
	id := opts.SkillID
	if !skillIDPattern.MatchString(id) {
		return nil, fmt.Errorf("%w: %q: must be publisher.name, dot-separated segments of a-z, 0-9, '_' and '-' (for example acme.wordcount)", ErrInvalidSkillID, id)
	}
	lang := opts.Lang
	if lang == "" {
		lang = LangGo
	}
	segs := strings.Split(id, ".")
	d := &data{
		SkillID:   id,
		Publisher: segs[0],
		Name:      segs[len(segs)-1],
		ToolID:    id + ".count",
		Lang:      lang,
	}
	d.Title = title(d.Name)
	d.Artifact = d.Name + ".palyra-skill"
	switch lang {
	case LangGo:
		if opts.SDKDir == "" {
			return nil, fmt.Errorf("%w: a Go skill needs a checkout of %s for go.mod's replace line", ErrSDKNotFound, SDKModule)
		}
		root, goVersion, err := checkSDK(opts.SDKDir)
		if err != nil {
			return nil, err
		}
		d.SDKDir, d.SourceDir, d.GoVersion = root, root, goVersion
		d.GoModule = opts.GoModule
		if d.GoModule == "" {
			d.GoModule = id
		}
		if err := checkModulePath(d.GoModule); err != nil {
			return nil, err
		}
		d.Module = d.Name + ".wasm"
		d.BuildCommand = "GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o " + d.Module + " ."
		d.Fuel = 50_000_000
	case LangWAT:
		if opts.SDKDir != "" {
			root, _, err := checkSDK(opts.SDKDir)
			if err != nil {
				return nil, err
			}
			d.SourceDir = root
		}
		d.Module = "module.wasm"
		d.BuildCommand = "wat2wasm module.wat -o module.wasm"
		d.Fuel = 10_000_000
	default:
		return nil, fmt.Errorf("%w: %q (want %s)", ErrUnknownLang, lang, strings.Join(Langs(), " or "))
	}
	return d, nil
}

// title makes a display name of the id's last segment: "word-count" gives
// "Word count".
func title(name string) string {
	t := strings.NewReplacer("_", " ", "-", " ").Replace(name)
	if t == "" {
		return name
	}
	return strings.ToUpper(t[:1]) + t[1:]
}

// checkModulePath refuses a Go module path the go command would refuse.
func checkModulePath(p string) error {
	if p == "" || strings.ContainsAny(p, " \t\n\"'`\\") || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return fmt.Errorf("%w: %q", ErrInvalidGoModule, p)
	}
	return nil
}

// checkSDK checks that dir is the root of a checkout of SDKModule that holds
// the SDK, and returns its absolute path and the go directive of its go.mod.
func checkSDK(dir string) (root, goVersion string, err error) {
	root, err = filepath.Abs(dir)
	if err != nil {
		return "", "", fmt.Errorf("%w: %s: %v", ErrSDKNotFound, dir, err)
	}
	mod, goVersion, err := readGoMod(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", "", fmt.Errorf("%w: %s: %v", ErrSDKNotFound, root, err)
	}
	if mod != SDKModule {
		return "", "", fmt.Errorf("%w: %s is module %q, not %s", ErrSDKNotFound, root, mod, SDKModule)
	}
	if st, err := os.Stat(filepath.Join(root, "sdk", "go", "skill", "skill.go")); err != nil || !st.Mode().IsRegular() {
		return "", "", fmt.Errorf("%w: %s has no sdk/go/skill", ErrSDKNotFound, root)
	}
	if goVersion == "" {
		goVersion = strings.TrimPrefix(runtime.Version(), "go")
	}
	return root, goVersion, nil
}

// readGoMod returns the module path and go directive of a go.mod file.
func readGoMod(p string) (module, goVersion string, err error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "module" {
			module = strings.Trim(f[1], `"`)
		}
		if len(f) >= 2 && f[0] == "go" {
			goVersion = f[1]
		}
	}
	if module == "" {
		return "", "", errors.New("go.mod has no module line")
	}
	return module, goVersion, nil
}

// FindSourceTree looks for a checkout of SDKModule: above the directory this
// package was compiled from (a palyra built from a clone without -trimpath),
// then above each of the given directories (for example the working
// directory). It returns "" when there is none.
func FindSourceTree(from ...string) string {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	return findFrom(append(starts, from...))
}

// findFrom returns the first checkout of SDKModule found above one of
// starts, or "".
func findFrom(starts []string) string {
	for _, s := range starts {
		for dir := filepath.Clean(s); ; dir = filepath.Dir(dir) {
			if root, _, err := checkSDK(dir); err == nil {
				return root
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return ""
}

// render executes the templates of d.Lang (and the common ones) and returns
// the files by name.
func render(d *data) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, sub := range []string{"common", d.Lang} {
		base := path.Join("templates", sub)
		entries, err := fs.ReadDir(templates, base)
		if err != nil {
			return nil, fmt.Errorf("scaffold templates %s: %w", sub, err)
		}
		for _, e := range entries {
			src, err := fs.ReadFile(templates, path.Join(base, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("scaffold template %s: %w", e.Name(), err)
			}
			t, err := template.New(e.Name()).Option("missingkey=error").Parse(string(src))
			if err != nil {
				return nil, fmt.Errorf("scaffold template %s: %w", e.Name(), err)
			}
			var out bytes.Buffer
			if err := t.Execute(&out, d); err != nil {
				return nil, fmt.Errorf("scaffold template %s: %w", e.Name(), err)
			}
			name := strings.TrimSuffix(e.Name(), ".tmpl")
			if name == "gitignore" {
				name = ".gitignore"
			}
			files[name] = out.Bytes()
		}
	}
	return files, nil
}

// makeDir creates dir (and its parents) or checks that it is empty. created
// reports whether this call made dir itself.
func makeDir(dir string) (created bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil:
		if len(entries) > 0 {
			return false, fmt.Errorf("%w: %s holds %s; choose a new directory with --dir", ErrDirNotEmpty, dir, entries[0].Name())
		}
		return false, nil
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, fmt.Errorf("create project directory: %w", err)
		}
		return true, nil
	default:
		return false, fmt.Errorf("project directory: %w", err)
	}
}

// writeNew writes a file that must not exist yet.
func writeNew(p string, b []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// undo removes the files Write wrote, and dir when Write created it.
func undo(dir string, created bool, written []string) {
	for _, name := range written {
		_ = os.Remove(filepath.Join(dir, name))
	}
	if created {
		_ = os.Remove(dir)
	}
}
