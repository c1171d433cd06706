package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/report"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/internal/escapeprobe"
)

// relRow is one line of the reliability table: a scenario (or one part of
// it), how many cases it tried, how many held, and its figures.
type relRow struct {
	Scenario string `json:"scenario"`
	Title    string `json:"title"`
	Tried    int    `json:"tried"`
	Held     int    `json:"held"`
	// Figures are the row's measurements, in order ("recovery median
	// 41 ms", "codes: timeout×3").
	Figures []string `json:"figures"`
	// Failures name the cases that did not hold (at most a few).
	Failures []string `json:"failures,omitempty"`
	// Unavailable marks a scenario this build cannot run; it neither holds
	// nor fails.
	Unavailable bool   `json:"unavailable,omitempty"`
	Note        string `json:"note,omitempty"`
}

// holds reports whether every case tried held.
func (r relRow) holds() bool { return r.Unavailable || r.Held == r.Tried }

// fail records a case that did not hold, keeping the first few names.
func (r *relRow) fail(format string, args ...any) {
	if len(r.Failures) < 8 {
		r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
	}
}

// check counts one case: tried, and held when ok; otherwise it is named
// in Failures.
func (r *relRow) check(ok bool, format string, args ...any) {
	r.Tried++
	if ok {
		r.Held++
		return
	}
	r.fail(format, args...)
}

// relReport is the reliability suite's result.
type relReport struct {
	Machine  report.Machine `json:"machine"`
	Command  string         `json:"command"`
	Quick    bool           `json:"quick"`
	Started  time.Time      `json:"started"`
	Duration float64        `json:"duration_seconds"`
	Rows     []relRow       `json:"rows"`
	AllHeld  bool           `json:"all_held"`
	Notes    []string       `json:"notes"`
}

// relScenario is one numbered part of the reliability suite.
type relScenario struct {
	id, title string
	run       func(ctx context.Context, e *env) ([]relRow, error)
}

var relScenarios = []relScenario{
	{"R1", "kill a sidecar under load", relKillSidecar},
	{"R2", "SIGKILL the host daemon", relKillDaemon},
	{"R3", "hostile artifacts", relHostileArtifacts},
	{"R4", "hostile guests", relHostileGuests},
	{"R5", "kill -9 during install/remove", relKillInstall},
	{"R6", "SSRF through the egress firewall", relSSRF},
	{"R7", "a secret's value in every output", relSecretLeak},
	{"R8", "sidecar escape probes", relEscapeProbes},
}

// errNotHeld is returned when a case of the suite did not hold; the report
// is printed first.
var errNotHeld = errors.New("reliability: some cases did not hold (see the table)")

// runReliability runs the reliability scenarios and prints their table.
func runReliability(ctx context.Context, e *env, start time.Time, progress func(string, ...any), stdout io.Writer) error {
	rep := &relReport{
		Machine: report.DetectMachine(moduleVersions()),
		Command: "go run ./cmd/palyra-bench " + strings.Join(os.Args[1:], " "),
		Quick:   e.opts.quick,
		Started: start,
		Notes:   relNotes,
	}
	for _, s := range relScenarios {
		if len(e.opts.only) > 0 && !slices.Contains(e.opts.only, s.id) {
			continue
		}
		progress("scenario %s: %s", s.id, s.title)
		rows, err := s.run(ctx, e)
		if err != nil {
			return fmt.Errorf("scenario %s (%s): %w", s.id, s.title, err)
		}
		rep.Rows = append(rep.Rows, rows...)
	}
	rep.Duration = time.Since(start).Seconds()
	rep.AllHeld = !slices.ContainsFunc(rep.Rows, func(r relRow) bool { return !r.holds() })
	progress("done")
	if e.opts.out != "" {
		if err := rep.writeFiles(e.opts.out); err != nil {
			return err
		}
	}
	var err error
	if e.opts.json {
		err = rep.json(stdout)
	} else {
		err = rep.markdown(stdout)
	}
	if err != nil {
		return err
	}
	if !rep.AllHeld {
		return errNotHeld
	}
	return nil
}

// relNotes are printed under the table.
var relNotes = []string{
	"Tried / held count cases; the run exits non-zero when a case did not hold. R1's recovery times are figures with a goal, not cases.",
	"Every child process (sidecars, palyra-host, palyra) is a real binary built from this tree; skills are real signed artifacts (testdata/wasm fixtures, sdk/examples).",
}

func (r *relReport) json(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (r *relReport) markdown(w io.Writer) error {
	b := bufio.NewWriter(w)
	mode := "full"
	if r.Quick {
		mode = "quick"
	}
	fmt.Fprintf(b, "# palyra-bench reliability report\n\n")
	fmt.Fprintf(b, "- Machine: %s/%s, %d cores, %s\n", r.Machine.OS, r.Machine.Arch, r.Machine.Cores, r.Machine.CPUModel)
	fmt.Fprintf(b, "- Go: %s\n", r.Machine.GoVersion)
	fmt.Fprintf(b, "- Command: `%s`\n", r.Command)
	fmt.Fprintf(b, "- Mode: %s\n", mode)
	fmt.Fprintf(b, "- Started: %s\n", r.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(b, "- Duration: %s\n\n", (time.Duration(r.Duration * float64(time.Second))).Round(time.Second))
	fmt.Fprintf(b, "| Scenario | What | Tried | Held | Figures | Holds |\n|---|---|--:|--:|---|:-:|\n")
	for _, row := range r.Rows {
		mark := "✓"
		switch {
		case row.Unavailable:
			mark = "—"
		case !row.holds():
			mark = "✗"
		}
		figs := slices.Clone(row.Figures)
		if len(row.Failures) > 0 {
			figs = append(figs, "did not hold: "+strings.Join(row.Failures, "; "))
		}
		if row.Note != "" {
			figs = append(figs, "("+row.Note+")")
		}
		tried, held := fmt.Sprint(row.Tried), fmt.Sprint(row.Held)
		if row.Unavailable {
			tried, held = "—", "—"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", row.Scenario, cell(row.Title), tried, held, cell(strings.Join(figs, "<br>")), mark)
	}
	fmt.Fprintln(b)
	for _, n := range r.Notes {
		fmt.Fprintf(b, "%s\n", n)
	}
	return b.Flush()
}

// cell makes s safe in a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// writeFiles writes reliability.md and reliability.json into dir.
func (r *relReport) writeFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, render := range map[string]func(io.Writer) error{"reliability.md": r.markdown, "reliability.json": r.json} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		err = render(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// counts formats a code → count map as "a×3, b×1", largest first.
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// fixtureManifest is the manifest of a testdata/wasm fixture skill: one
// tool bench.run, the given quota lines.
const fixtureManifest = `manifest_version = 2
skill_id = %q
name = "Fixture"
version = %q
publisher = "bench"

[[entrypoints.tools]]
id = "bench.run"
name = "run"
description = "Runs the fixture"
input_schema = { type = "object" }
output_schema = {}

[capabilities.quotas]
%s

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`

// fixtureArtifact signs testdata/wasm/<module> as skill id at version 1.0.0
// with quotas (TOML lines, may be empty).
func (e *env) fixtureArtifact(id, module, quotas string) ([]byte, error) {
	return e.fixtureArtifactVersion(id, "1.0.0", module, quotas, nil)
}

// fixtureArtifactVersion is fixtureArtifact at version, with extra
// (incompressible filler) as an asset when not nil.
func (e *env) fixtureArtifactVersion(id, version, module, quotas string, asset []byte) ([]byte, error) {
	wasm, err := os.ReadFile(filepath.Join(e.root, "testdata", "wasm", module))
	if err != nil {
		return nil, err
	}
	in := artifact.BuildInput{
		Manifest:   []byte(fmt.Sprintf(fixtureManifest, id, version, quotas)),
		Modules:    []artifact.File{{Path: "module.wasm", Data: wasm}},
		SBOM:       []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`),
		Provenance: []byte(`{"builder":{"id":"palyra-bench"},"subject":[{"name":"modules/module.wasm"}]}`),
		SigningKey: e.key, SignedAt: signedAt,
	}
	if asset != nil {
		in.Assets = []artifact.File{{Path: "filler.bin", Data: asset}}
	}
	b, err := artifact.Build(in)
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", id, err)
	}
	return b.Bytes, nil
}

// probeResult is one escape attempt of the probe sidecar: what it tried,
// whether its outcome is the one hardening requires (Held: an escape
// attempt failed, a control attempt succeeded) and how.
type probeResult struct {
	Attempt string // "serve: open_etc_passwd /etc/passwd", ...
	Control bool   // reading its module, writing its private dir: must succeed
	Held    bool
	Detail  string // the error the attempt got, or "succeeded"
}

// escapeProbes runs the escape probes of point 1 (internal/escapeprobe: a
// sidecar built with the palyraprobe tag hardens itself as a serving
// sidecar and as a precompile child do, then tries to open /etc/passwd and
// a file in the state dir, connect to and listen on TCP, open a netlink
// socket, execve /bin/sh, fork, ptrace and process_vm_readv its parent,
// signal it and write outside its dir) and returns each attempt's result
// and each child's /proc/<pid>/status hardening lines.
func escapeProbes(ctx context.Context, e *env) ([]probeResult, escapeprobe.StatusLines, error) {
	bin, err := escapeprobe.Build(ctx, e.work)
	if err != nil {
		return nil, nil, err
	}
	res, status, err := escapeprobe.Run(ctx, escapeprobe.Options{Probe: bin, Dir: e.work})
	if err != nil {
		return nil, nil, err
	}
	out := make([]probeResult, 0, len(res))
	for _, r := range res {
		d := r.Err
		if r.Succeeded {
			d = "succeeded"
		}
		out = append(out, probeResult{Attempt: r.Child + ": " + r.Name + " " + r.Target, Control: r.Control, Held: r.Held, Detail: d})
	}
	return out, status, nil
}

// relEscapeProbes is R8: every escape attempt must be blocked, and the
// sidecar must report NoNewPrivs 1 and Seccomp 2.
func relEscapeProbes(ctx context.Context, e *env) ([]relRow, error) {
	row := relRow{Scenario: "R8", Title: "sidecar escape probes (open /etc/passwd and the state dir, TCP connect, execve, ptrace, write outside)"}
	if runtime.GOOS != "linux" {
		row.Unavailable = true
		row.Figures = []string{"not available on " + runtime.GOOS}
		row.Note = "sidecar hardening is Linux's (seccomp, Landlock)"
		return []relRow{row}, nil
	}
	results, status, err := escapeProbes(ctx, e)
	if err != nil {
		return nil, err
	}
	var blocked, escapes, allowed, controls int
	for _, r := range results {
		row.check(r.Held, "%s: outcome not the one required (control %v: %s)", r.Attempt, r.Control, r.Detail)
		switch {
		case r.Control:
			controls++
			if r.Held {
				allowed++
			}
		default:
			escapes++
			if r.Held {
				blocked++
			}
		}
	}
	row.Figures = append(row.Figures, fmt.Sprintf("escape attempts blocked %d/%d, controls allowed %d/%d", blocked, escapes, allowed, controls))
	for _, child := range escapeprobe.Children {
		st := status[child]
		row.check(st["NoNewPrivs"] == "1", "%s child: /proc status NoNewPrivs %q, want 1", child, st["NoNewPrivs"])
		row.check(st["Seccomp"] == "2", "%s child: /proc status Seccomp %q, want 2", child, st["Seccomp"])
		row.check(st["CapEff"] == "0000000000000000", "%s child: /proc status CapEff %q, want none", child, st["CapEff"])
		row.Figures = append(row.Figures, fmt.Sprintf("%s: NoNewPrivs %s, Seccomp %s, CapEff %s", child, st["NoNewPrivs"], st["Seccomp"], st["CapEff"]))
	}
	return []relRow{row}, nil
}
