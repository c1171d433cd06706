package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra-bench/internal/report"
)

// options are the command's flags.
type options struct {
	quick       bool
	reliability bool
	json        bool
	out         string
	only        []string
	cpuProfile  string

	clusterDemo      bool
	clusterBin       string
	clusterArtifacts []string
}

// n picks the quick or the full count.
func (o options) n(quick, full int) int {
	if o.quick {
		return quick
	}
	return full
}

// d picks the quick or the full duration.
func (o options) d(quick, full time.Duration) time.Duration {
	if o.quick {
		return quick
	}
	return full
}

// scenario is one lettered part of the bench.
type scenario struct {
	id, title string
	run       func(ctx context.Context, e *env) ([]report.Row, error)
}

var scenarios = []scenario{
	{"A", "Go-guest tool call", scenarioA},
	{"B", "trivial WAT tool call", scenarioB},
	{"C", "cold start", scenarioC},
	{"D", "throughput", scenarioD},
	{"E", "density", scenarioE},
	{"F", "admission", scenarioF},
	{"G", "daemon API", scenarioG},
	{"H", "cluster", scenarioH},
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "palyra-bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "palyra-bench:", err)
		stop()
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	var only string
	fs := flag.NewFlagSet("palyra-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.quick, "quick", false, "smoke run: few iterations, under a minute (with --reliability: under two minutes)")
	fs.BoolVar(&o.reliability, "reliability", false, "run the reliability suite (R1 to R8: kills, hostile input, SSRF, secrets) instead of the performance bench")
	fs.BoolVar(&o.json, "json", false, "print the report as JSON instead of Markdown")
	fs.StringVar(&o.out, "out", "", "also write report.md, report.json and ratios.svg into this directory")
	fs.StringVar(&only, "only", "", "run only these scenarios, e.g. A,B")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (the supervisor side) to this file")
	fs.BoolVar(&o.clusterDemo, "cluster-demo", false, "run the cluster demo (scripts/cluster-demo.sh) instead of the bench: three nodes, a kill under load, the figures; exits 1 when one is wrong")
	fs.StringVar(&o.clusterBin, "cluster-bin", "", "with --cluster-demo: the directory holding palyra-host and palyra-sidecar")
	var artifacts string
	fs.StringVar(&artifacts, "cluster-artifacts", "", "with --cluster-demo: the signed echo, report, kv-counter and event-log artifacts, comma-separated")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: palyra-bench [--reliability] [--quick] [--json] [--out DIR] [--only A,B,...|R1,R2,...] [--cpuprofile FILE]\n       palyra-bench --cluster-demo --cluster-bin DIR --cluster-artifacts A,B,... [--quick]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, a := range strings.Split(artifacts, ",") {
		if a = strings.TrimSpace(a); a != "" {
			o.clusterArtifacts = append(o.clusterArtifacts, a)
		}
	}
	for _, id := range strings.Split(only, ",") {
		id = strings.ToUpper(strings.TrimSpace(id))
		if id == "" {
			continue
		}
		if o.reliability {
			if !slices.ContainsFunc(relScenarios, func(s relScenario) bool { return s.id == id }) {
				return o, fmt.Errorf("--only: no reliability scenario %q (scenarios are %s to %s)", id, relScenarios[0].id, relScenarios[len(relScenarios)-1].id)
			}
		} else if !slices.ContainsFunc(scenarios, func(s scenario) bool { return s.id == id }) {
			return o, fmt.Errorf("--only: no scenario %q (scenarios are %s to %s)", id, scenarios[0].id, scenarios[len(scenarios)-1].id)
		}
		o.only = append(o.only, id)
	}
	return o, nil
}

// run builds what the scenarios need, runs them in order and writes the
// report.
func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	start := time.Now()
	progress := func(format string, args ...any) {
		fmt.Fprintf(stderr, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if o.clusterDemo {
		return clusterDemo(ctx, o, stdout, progress)
	}
	e, err := newEnv(ctx, o, progress)
	if err != nil {
		return err
	}
	defer e.close()
	if o.reliability {
		return runReliability(ctx, e, start, progress, stdout)
	}

	rep := &report.Report{
		Machine: report.DetectMachine(moduleVersions()),
		Command: "go run ./cmd/palyra-bench " + strings.Join(os.Args[1:], " "),
		Quick:   o.quick,
		Started: start,
	}
	for _, s := range scenarios {
		if len(o.only) > 0 && !slices.Contains(o.only, s.id) {
			continue
		}
		progress("scenario %s: %s", s.id, s.title)
		rows, err := s.run(ctx, e)
		if err != nil {
			return fmt.Errorf("scenario %s (%s): %w", s.id, s.title, err)
		}
		rep.Rows = append(rep.Rows, rows...)
	}
	rep.Duration = time.Since(start)
	rep.Notes = notes
	progress("done")

	if o.out != "" {
		if err := rep.WriteFiles(o.out); err != nil {
			return err
		}
	}
	if o.json {
		return rep.JSON(stdout)
	}
	return rep.Markdown(stdout)
}

// notes are printed under the table: how each scenario measures.
var notes = []string{
	"Every figure is from this one run; peers run interleaved with ours, call by call, so the machine's noise hits both sides alike.",
	"A: ours is host.Call of the echo example (sidecar, fresh instance per call, prepared instances on); the peers run the same logic in-process with a fresh instance per call (store + instantiate + _initialize + call).",
	"B: ours is host.Call of a WAT tool with a constant 16-byte output; the peer is a hashicorp/go-plugin gRPC plugin (go-plugin's AutoMTLS; ours is mutual TLS too, with Ed25519 keys pinned per sidecar) whose Invoke echoes the same 16-byte input.",
	"C: spawn to first reply; ours is host.Call after the skill's sidecar was stopped, the peer starts the raw go-plugin plugin and makes its first RPC. Both authenticate both ends: the peer with go-plugin's AutoMTLS (P-521 keys made and verified on each start), ours with Ed25519 keys pinned per sidecar (RATIONALE.md).",
	"E: RSS is VmRSS from /proc; the supervisor figures come from a separate host-embedding process (internal/densityapp) after its idle sidecars were reaped.",
	"H: real palyra-host processes, each a cluster node with an embedded nats-server (JetStream) on loopback; r serves no skill, so its calls are routed.",
	"Goals are the project's targets; the bench reports, it does not fail on them.",
}

// moduleVersions are the versions of the modules the report names.
func moduleVersions() map[string]string {
	v := map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	for _, d := range bi.Deps {
		switch d.Path {
		case "github.com/bytecodealliance/wasmtime-go/v25", "github.com/tetratelabs/wazero", "github.com/extism/go-sdk",
			"github.com/hashicorp/go-plugin", "google.golang.org/grpc":
			v[d.Path] = d.Version
		}
	}
	return v
}
