package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
)

// errBuild is a module build (go build, wat2wasm) that failed or could not
// start.
var errBuild = errcode.New("dev_build_failed", "module build failed")

// devManifestFile is the skill.toml of a skill project directory.
const devManifestFile = "skill.toml"

// defaultWatchInterval is how often --watch looks at the files' mtimes.
const defaultWatchInterval = 500 * time.Millisecond

func (a *app) devCommand() *cobra.Command {
	return group("dev", "Author tools: run a skill's module without packaging it", a.devRunCommand())
}

// devRunReport is the --json result of dev run: runReport with the
// module and the version it ran as.
type devRunReport struct {
	runReport
	Module  string `json:"module"`
	Version string `json:"version,omitempty"`
}

func (a *app) devRunCommand() *cobra.Command {
	var (
		s        stateFlags
		input    string
		timeout  time.Duration
		watch    bool
		interval time.Duration
	)
	c := &cobra.Command{
		Use:   "run DIR|MODULE.wasm|MODULE.wat TOOL [--input JSON|@FILE] [--watch] [--timeout D] [--sidecar PATH]",
		Short: "Run a tool of an unpackaged, unsigned module in a sidecar (inline module)",
		Long: "run runs one tool of a module that is not packaged, signed or installed, in a real palyra-sidecar, under the same grants, limits and schema checks as an installed skill, and prints the tool's output (JSON); with --json, {output, stats, module, version}.\n\n" +
			"DIR is a skill project: DIR/skill.toml gives the tools, their schemas, the capabilities and the quotas (judged by the operator profile as at install), and the module is operator.plugin.default_module_path (in DIR or DIR/modules) or the one .wasm in DIR or DIR/modules.\n" +
			"MODULE.wasm alone runs under a default manifest: the one tool TOOL, which must be <publisher>.<name>, taking and returning any JSON, with no capabilities (every capability call is refused as not_granted) and the default quotas (10M fuel, 64 MiB, 30 s). MODULE.wat is compiled with wat2wasm first.\n\n" +
			"Inline modules run only where the operator allows them: policy.toml [dev] allow_inline = true (default false; never on a hardened deployment); otherwise the run fails with inline_not_allowed. Use --profile FILE for a profile of your own, or `palyra policy set`. Nothing is installed; storage lives in its own key space, dev:<skill_id>.\n\n" +
			"--watch builds the module, runs the tool, and does it again whenever a file of DIR (or MODULE) changes, until Ctrl-C: a Go project (DIR has go.mod or .go files) is built with GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o MODULE .; a .wat with wat2wasm when it is in $PATH; a .wasm alone is run as it is. A failed build or run is reported and the watch goes on.\n" +
			"With --url the daemon runs the module in its own sidecar under its own profile; --sidecar is local-only.",
		Example: "  # Run the tool of a module built by hand, with the default manifest\n" +
			"  palyra dev run ./wordcount.wasm acme.count --input '{\"text\":\"a b c\"}'\n\n" +
			"  # Run a skill project's tool under its skill.toml, rebuilding and rerunning on every change\n" +
			"  palyra dev run ./wordcount acme.wordcount.count --input @input.json --watch\n\n" +
			"  # With a profile of your own that allows inline modules\n" +
			"  printf '[dev]\\nallow_inline = true\\n' > dev-policy.toml\n" +
			"  palyra dev run ./wordcount acme.wordcount.count --profile dev-policy.toml --input '{\"text\":\"hi\"}'",
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := a.runInput(input)
			if err != nil {
				return err
			}
			if interval <= 0 {
				return fmt.Errorf("%w: --interval must be positive", errUsage)
			}
			p, err := openDevProject(args[0])
			if err != nil {
				return err
			}
			sv, err := a.service(cmd, &s, append([]string{"sidecar"}, stateLocalFlags...)...)
			if err != nil {
				return err
			}
			defer sv.Close()
			req := host.InlineRunRequest{ToolID: args[1], Input: in, Timeout: timeout}
			if !watch {
				return a.devRunOnce(cmd.Context(), sv, p, req)
			}
			return a.devWatch(cmd.Context(), sv, p, req, interval)
		},
	}
	s.register(c, true)
	s.registerSidecar(c, "the palyra-sidecar binary (default $"+sidecarEnv+", next to palyra, or in $PATH)")
	f := c.Flags()
	f.StringVar(&input, "input", "", "the tool input: a JSON document, or @FILE to read it from a file (@- for stdin); default null")
	f.DurationVar(&timeout, "timeout", 0, "the call's timeout, at most 10m (the manifest's and the profile's limits still apply)")
	f.BoolVar(&watch, "watch", false, "build, run, and build and run again on every change of the project's files, until Ctrl-C")
	f.DurationVar(&interval, "interval", defaultWatchInterval, "with --watch, how often the files' modification times are checked")
	return c
}

// devRunOnce reads the module and the manifest and runs the tool once.
func (a *app) devRunOnce(ctx context.Context, sv *service, p *devProject, req host.InlineRunRequest) error {
	if err := p.load(ctx, &req); err != nil {
		return err
	}
	res, err := sv.RunInline(ctx, req)
	rep := devRunReport{runReport: runReport{SkillID: p.skillID, ToolID: req.ToolID}, Module: p.module}
	if res == nil {
		res = host.CallResultOf(err)
	}
	if res != nil {
		rep.SkillID, rep.Version = res.SkillID, res.Version
	}
	if err := a.callOutcome(res, err, &rep.runReport, &rep); err != nil {
		return err
	}
	if !a.structured() {
		for _, l := range rep.Logs {
			fmt.Fprintf(a.stderr, "log %s: %q\n", l.Level, l.Message)
		}
	}
	return a.emitRun(&rep.runReport, &rep)
}

// devWatch builds and runs, then does it again on every change of the
// project's files, until ctx ends (Ctrl-C), which ends it without error.
// A failed build or run is reported on stderr and the watch goes on.
func (a *app) devWatch(ctx context.Context, sv *service, p *devProject, req host.InlineRunRequest, interval time.Duration) error {
	for {
		if err := p.build(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			a.reportError(err)
		} else if err := a.devRunOnce(ctx, sv, p, req); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			a.reportError(err)
		}
		fmt.Fprintf(a.stderr, "dev run: watching %s for changes (Ctrl-C to stop)\n", p.root)
		// Taken after the build, which wrote the module: changes count
		// from here.
		if err := waitChange(ctx, p, p.snapshot(), interval); err != nil {
			return nil // ctx ended: Ctrl-C
		}
		fmt.Fprintf(a.stderr, "dev run: change in %s; rebuilding\n", p.root)
	}
}

// waitChange polls p's files every interval until their snapshot differs
// from snap and then stays the same for one more interval (an editor's
// save, a copy in progress); or returns ctx's error.
func waitChange(ctx context.Context, p *devProject, snap map[string]fileStamp, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	changed := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		cur := p.snapshot()
		same := stampsEqual(cur, snap)
		switch {
		case changed && same:
			return nil
		case !same:
			changed = true
		}
		snap = cur
	}
}

// fileStamp is what a poll sees of a file.
type fileStamp struct {
	mtime time.Time
	size  int64
}

func stampsEqual(a, b map[string]fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !v.mtime.Equal(w.mtime) || v.size != w.size {
			return false
		}
	}
	return true
}

// devProject is what dev run runs: a skill project directory or a module
// file.
type devProject struct {
	// root is the directory watched (the project, or the module's file
	// for a lone module).
	root string
	// dir is set for a project directory.
	dir string
	// module is the .wasm run (it may not exist yet for a project whose
	// build makes it); wat is the .wat it is compiled from, if any.
	module, wat string
	// goBuild: the module is built from the Go package in dir.
	goBuild bool
	// skillID is the manifest's (for reports before a run).
	skillID string
}

// openDevProject resolves DIR|MODULE.wasm|MODULE.wat.
func openDevProject(arg string) (*devProject, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errIO, err)
	}
	if !fi.IsDir() {
		p := &devProject{root: arg, module: arg}
		switch strings.ToLower(filepath.Ext(arg)) {
		case ".wasm":
		case ".wat":
			p.wat = arg
			p.module = strings.TrimSuffix(arg, filepath.Ext(arg)) + ".wasm"
		default:
			return nil, fmt.Errorf("%w: %s is neither a directory with a skill.toml, a .wasm nor a .wat", errUsage, arg)
		}
		return p, nil
	}
	p := &devProject{root: arg, dir: arg}
	data, err := readSmallFile(filepath.Join(arg, devManifestFile), manifest.MaxManifestBytes)
	if err != nil {
		return nil, err
	}
	m, err := manifest.Parse(data)
	if err != nil {
		return nil, err
	}
	p.skillID = m.SkillID
	p.goBuild = isGoPackage(arg)
	if pl := m.Operator.Plugin; pl != nil && pl.DefaultModulePath != "" {
		rel := filepath.FromSlash(pl.DefaultModulePath)
		for _, c := range []string{filepath.Join(arg, rel), filepath.Join(arg, "modules", strings.TrimPrefix(pl.DefaultModulePath, "modules/"))} {
			if _, err := os.Stat(c); err == nil {
				p.module = c
				break
			}
		}
		if p.module == "" {
			p.module = filepath.Join(arg, rel)
		}
	} else {
		var found []string
		for _, d := range []string{arg, filepath.Join(arg, "modules")} {
			ms, _ := filepath.Glob(filepath.Join(d, "*.wasm"))
			found = append(found, ms...)
		}
		switch {
		case len(found) == 1:
			p.module = found[0]
		case len(found) > 1:
			return nil, fmt.Errorf("%w: %s holds several modules (%s): name the one to run in skill.toml, [operator.plugin] default_module_path", errUsage, arg, strings.Join(found, ", "))
		default:
			// Not built yet: a build makes <last part of the skill id>.wasm.
			p.module = filepath.Join(arg, m.SkillID[strings.LastIndex(m.SkillID, ".")+1:]+".wasm")
		}
	}
	if !p.goBuild {
		if w := strings.TrimSuffix(p.module, filepath.Ext(p.module)) + ".wat"; fileExists(w) {
			p.wat = w
		}
	}
	return p, nil
}

// newer reports whether src was modified after out, or out is missing.
func newer(src, out string) bool {
	so, err := os.Stat(src)
	if err != nil {
		return false
	}
	oo, err := os.Stat(out)
	return err != nil || so.ModTime().After(oo.ModTime())
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// isGoPackage reports whether dir is a Go package (go.mod or a .go file).
func isGoPackage(dir string) bool {
	if fileExists(filepath.Join(dir, "go.mod")) {
		return true
	}
	gos, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(gos) > 0
}

// load reads the module and the manifest into req.
func (p *devProject) load(ctx context.Context, req *host.InlineRunRequest) error {
	if p.wat != "" && newer(p.wat, p.module) {
		if err := p.build(ctx); err != nil {
			return err
		}
	}
	mod, err := readSmallFile(p.module, host.MaxInlineModuleBytes+1)
	if err != nil {
		if p.dir != "" && errors.Is(err, errIO) && !fileExists(p.module) {
			return fmt.Errorf("%w: %s is not built yet: build it (%s) or run with --watch, which builds it", errIO, p.module, p.buildHint())
		}
		if errors.Is(err, errTooLarge) {
			// Sent whole, so that the Service names its limit.
			mod, err = os.ReadFile(p.module)
		}
		if err != nil {
			return err
		}
	}
	req.Module, req.ModuleName = mod, filepath.Base(p.module)
	req.Manifest = ""
	if p.dir != "" {
		data, err := readSmallFile(filepath.Join(p.dir, devManifestFile), manifest.MaxManifestBytes)
		if err != nil {
			return err
		}
		req.Manifest = string(data)
	}
	return nil
}

// buildHint is the command that builds p's module.
func (p *devProject) buildHint() string {
	switch {
	case p.goBuild:
		return "GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o " + filepath.Base(p.module) + " ."
	case p.wat != "":
		return "wat2wasm " + p.wat + " -o " + p.module
	}
	return "see docs/dev-run.md"
}

// build builds p's module: go build for a Go project, wat2wasm for a .wat
// (when it is in $PATH), nothing for a .wasm alone. Its output goes to
// stderr.
func (p *devProject) build(ctx context.Context) error {
	var cmd *exec.Cmd
	switch {
	case p.goBuild:
		out, err := filepath.Abs(p.module)
		if err != nil {
			return fmt.Errorf("%w: %v", errBuild, err)
		}
		gobin, err := exec.LookPath("go")
		if err != nil {
			// The toolchain palyra was built with, when it is still there.
			gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
			if !fileExists(gobin) {
				return fmt.Errorf("%w: building %s needs the go command in $PATH", errBuild, p.dir)
			}
		}
		cmd = exec.CommandContext(ctx, gobin, "build", "-trimpath", "-buildmode=c-shared", "-o", out, ".")
		cmd.Dir = p.dir
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	case p.wat != "":
		w2w, err := exec.LookPath("wat2wasm")
		if err != nil {
			return fmt.Errorf("%w: %s needs wat2wasm (WABT) in $PATH to be compiled: %v", errBuild, p.wat, err)
		}
		cmd = exec.CommandContext(ctx, w2w, p.wat, "-o", p.module)
	default:
		return nil
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if len(msg) > 4096 {
			msg = msg[:4096] + " ..."
		}
		return fmt.Errorf("%w: %s: %v\n%s", errBuild, strings.Join(cmd.Args, " "), err, msg)
	}
	return nil
}

// snapshot is the stamp of every file watched: the module file (and its
// .wat) for a lone module; for a project, every regular file under it but
// the module it builds, outside hidden directories.
func (p *devProject) snapshot() map[string]fileStamp {
	snap := map[string]fileStamp{}
	add := func(path string, fi fs.FileInfo) { snap[path] = fileStamp{fi.ModTime(), fi.Size()} }
	if p.dir == "" {
		for _, f := range []string{p.module, p.wat} {
			if fi, err := os.Stat(f); f != "" && err == nil {
				add(f, fi)
			}
		}
		if p.wat != "" {
			delete(snap, p.module) // the build's output
		}
		return snap
	}
	built := p.goBuild || p.wat != ""
	modAbs, _ := filepath.Abs(p.module)
	_ = filepath.WalkDir(p.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != p.dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if built {
			if abs, _ := filepath.Abs(path); abs == modAbs {
				return nil
			}
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			add(path, fi)
		}
		return nil
	})
	return snap
}
