package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/internal/buildinfo"
)

// The files skills package build --dir looks for in a skill project.
const (
	projectManifest   = "skill.toml"
	projectModulesDir = "modules"
	projectAssetsDir  = "assets"
)

// packageFile is a module or asset to package: where it is on disk and the
// path Build gets (the entry is modules/ or assets/ + Name).
type packageFile struct {
	Disk string
	Name string
}

// buildPlan is what skills package build reads: from flags, or found in a
// project directory.
type buildPlan struct {
	manifest         string
	modules, assets  []packageFile
	sbom, provenance string // "" to generate
	output           string // "" to name it after the skill, in dir
}

// buildFlags are the file flags of skills package build.
type buildFlags struct {
	dir, manifest, sbom, provenance, output string
	modules, assets                         []string
}

// plan resolves the flags into files. Without --dir, --manifest, --module
// and --output are required. With --dir, each flag left out is found in
// the directory: skill.toml; the modules *.wasm at its top and
// modules/**/*.wasm; the assets assets/** (hidden files left out);
// sbom.cdx.json and provenance.json when present (else generated); and the
// artifact <skill_id>-<version>.palyra-skill in the directory.
func (f *buildFlags) plan() (*buildPlan, error) {
	p := &buildPlan{manifest: f.manifest, sbom: f.sbom, provenance: f.provenance, output: f.output}
	for _, m := range f.modules {
		p.modules = append(p.modules, packageFile{Disk: m, Name: artifact.CLIPath(m)})
	}
	for _, a := range f.assets {
		p.assets = append(p.assets, packageFile{Disk: a, Name: artifact.CLIPath(a)})
	}
	if f.dir == "" {
		var missing []string
		for _, fl := range []struct {
			name string
			set  bool
		}{{"--manifest", f.manifest != ""}, {"--module", len(f.modules) > 0}, {"--output", f.output != ""}} {
			if !fl.set {
				missing = append(missing, fl.name)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%w: give --dir DIR (a skill project), or %s", errUsage, strings.Join(missing, ", "))
		}
		return p, nil
	}
	st, err := os.Stat(f.dir)
	if err != nil {
		return nil, fmt.Errorf("%w: --dir: %v", errIO, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%w: --dir %s is not a directory", errUsage, f.dir)
	}
	if p.manifest == "" {
		p.manifest = filepath.Join(f.dir, projectManifest)
		if existing(p.manifest) == "" {
			return nil, fmt.Errorf("%w: no %s in %s: palyra skills new writes a skill project, or name the manifest with --manifest", errIO, projectManifest, f.dir)
		}
	}
	if len(f.modules) == 0 {
		if p.modules, err = findModules(f.dir); err != nil {
			return nil, err
		}
		if len(p.modules) == 0 {
			return nil, fmt.Errorf("%w: no module in %s (looked for *.wasm and %s/**/*.wasm): build it first (Go: GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o skill.wasm .), or name it with --module",
				manifest.ErrValidation, f.dir, projectModulesDir)
		}
	}
	if len(f.assets) == 0 {
		if p.assets, err = findFiles(filepath.Join(f.dir, projectAssetsDir), nil); err != nil {
			return nil, err
		}
	}
	if p.sbom == "" {
		p.sbom = existing(filepath.Join(f.dir, artifact.SBOMPath))
	}
	if p.provenance == "" {
		p.provenance = existing(filepath.Join(f.dir, artifact.ProvenancePath))
	}
	return p, nil
}

// findModules returns the *.wasm files at the top of dir and every *.wasm
// under dir/modules, in path order.
func findModules(dir string) ([]packageFile, error) {
	top, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errIO, err)
	}
	var out []packageFile
	for _, e := range top {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".wasm") && !hidden(e.Name()) {
			out = append(out, packageFile{Disk: filepath.Join(dir, e.Name()), Name: e.Name()})
		}
	}
	more, err := findFiles(filepath.Join(dir, projectModulesDir), func(name string) bool { return strings.HasSuffix(name, ".wasm") })
	if err != nil {
		return nil, err
	}
	return append(out, more...), nil
}

// findFiles returns the regular files under root (none when root does not
// exist) that keep passes, named relative to root with '/', in path order.
// Hidden files and directories are left out.
func findFiles(root string, keep func(name string) bool) ([]packageFile, error) {
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var out []packageFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != root && hidden(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if name := filepath.ToSlash(rel); keep == nil || keep(name) {
			out = append(out, packageFile{Disk: path, Name: name})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errIO, err)
	}
	return out, nil
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

// existing returns path when a file is there, else "".
func existing(path string) string {
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		return path
	}
	return ""
}

// palyraVersion is the version recorded as the builder of generated SBOMs
// and provenance: the version `palyra version` prints, and for a
// development build the commit it was built from.
func palyraVersion() string {
	in := buildinfo.Get("palyra")
	if in.Version != buildinfo.Devel || in.Commit == buildinfo.Unknown {
		return in.Version
	}
	rev := in.Commit
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if in.Modified {
		rev += "-dirty"
	}
	return in.Version + "+" + rev
}

// problemLines splits an error for text output: when it holds several
// manifest problems, the message with the list cut down to its count, and
// one line per problem (with its code); else the message and no lines.
func problemLines(err error) (string, []string) {
	msg := err.Error()
	var p *manifest.Problems
	if !errors.As(err, &p) {
		return msg, nil
	}
	n := len(p.List) + p.More
	msg = strings.Replace(msg, p.Error(), fmt.Sprintf("manifest: %d problems", n), 1)
	lines := make([]string, 0, len(p.List)+1)
	for _, fe := range p.List {
		lines = append(lines, fmt.Sprintf("%s [%s]", fe.Item(), errcode.Of(fe)))
	}
	if p.More > 0 {
		lines = append(lines, fmt.Sprintf("and %d more (fix the ones above and build again)", p.More))
	}
	return msg, lines
}
