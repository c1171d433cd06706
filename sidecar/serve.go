package sidecar

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/palyra-go/palyra/host/errcode"
	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
	"github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// DefaultStopGrace is the default of ServeConfig.StopGrace.
const DefaultStopGrace = 2 * time.Second

// ServeConfig configures a sidecar process. The zero value is usable.
type ServeConfig struct {
	// Engine configures the process's wasmrt.Engine. Its CacheDir is
	// replaced by LoadSkillRequest.cache_dir. The precompile mode must run
	// with the same Engine settings as the sidecars that load its output,
	// since they are part of the cache key.
	Engine wasmrt.Config

	// Logger receives the sidecar's logs. Default: JSON on stderr at Info,
	// which go-plugin forwards to the supervisor's logger. Records are
	// tagged with skill_id; they never carry tool input or output.
	Logger hclog.Logger

	// StopGrace bounds how long the gRPC server drains after Stop has
	// answered (the supervisor normally closes its connection at once, with
	// go-plugin's Kill) before it is stopped hard. Default DefaultStopGrace.
	StopGrace time.Duration

	// IdleTrim is the period at which the sidecar checks whether it has
	// gone quiet; once it allocated next to nothing for two periods in a
	// row it collects its garbage and returns the free memory to the
	// operating system (debug.FreeOSMemory), once per quiet spell, so an
	// idle sidecar stays small. Default DefaultIdleTrim; negative: never.
	IdleTrim time.Duration

	// TLSClientKey is the supervisor's Ed25519 public key, as it passes it
	// in sidecarplugin.ClientKeyEnv (Run reads it from there). When set,
	// the sidecar makes its own Ed25519 TLS identity, announces its key on
	// stdout before go-plugin's handshake line, and accepts only that
	// supervisor key (sidecarplugin.PinnedConfig). When empty, TLS is left
	// to go-plugin: AutoMTLS for a go-plugin client that asks for it.
	TLSClientKey string

	// OnStop, when set, runs once when the supervisor asks the sidecar to
	// stop, after the skill is closed and before the answer goes out: the
	// supervisor may kill the process as soon as it has the answer.
	OnStop func()

	// hardening is the outcome of Run's hardening, reported in every
	// LoadSkillResponse; nil when Serve is called directly (not hardened).
	hardening *sidecarv1.Hardening
	// laterHarden, when not nil, is the per-skill part of the hardening
	// that LoadSkill applies before it reads the module.
	laterHarden *laterHarden
}

// Serve serves the sidecar contract over go-plugin on this process's stdio
// handshake until the supervisor stops it (Stop, or go-plugin's Kill). It
// must be called from a process the supervisor started with Handshake's magic
// cookie; otherwise go-plugin prints a notice and exits with status 1. It
// closes the engine before returning.
func Serve(cfg ServeConfig) {
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = DefaultStopGrace
	}
	if cfg.IdleTrim == 0 {
		cfg.IdleTrim = DefaultIdleTrim
	}
	if cfg.IdleTrim > 0 {
		done := make(chan struct{})
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			newIdleTrimmer(cfg.IdleTrim).run(done)
		}()
		defer func() {
			close(done)
			<-finished
		}()
	}
	if onStop := cfg.OnStop; onStop != nil {
		var once sync.Once
		cfg.OnStop = func() { once.Do(onStop) }
	}
	log := cfg.Logger
	if log == nil {
		log = hclog.New(&hclog.LoggerOptions{
			Name:       "palyra-sidecar",
			Level:      hclog.Info,
			Output:     os.Stderr,
			JSONFormat: true,
		})
	}

	var (
		mu   sync.Mutex
		gsrv *grpc.Server
		srv  *server
		once sync.Once
	)
	// stopped ends the gRPC server after Stop's answer is out: GracefulStop
	// lets the Stop RPC finish and waits for the supervisor to close its
	// connection; after StopGrace the server is stopped hard.
	stopped := func() {
		once.Do(func() {
			mu.Lock()
			g := gsrv
			mu.Unlock()
			if g == nil {
				return
			}
			t := time.AfterFunc(cfg.StopGrace, g.Stop)
			go func() {
				g.GracefulStop()
				t.Stop()
			}()
		})
	}
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: sidecarplugin.Handshake,
		// The key line goes first on stdout, where go-plugin's handshake
		// line follows.
		TLSProvider: logRefusedPeers(sidecarplugin.TLSProvider(cfg.TLSClientKey, os.Stdout), log),
		Plugins: sidecarplugin.ServerPlugins(func(d *sidecarplugin.BrokerDialer) sidecarv1.SidecarServiceServer {
			s := newServer(cfg, log, d, stopped)
			mu.Lock()
			srv = s
			mu.Unlock()
			return s
		}),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			g := grpc.NewServer(append(opts, serverOptions()...)...)
			mu.Lock()
			gsrv = g
			mu.Unlock()
			return g
		},
		Logger: log,
	})
	mu.Lock()
	s := srv
	mu.Unlock()
	if s != nil {
		s.closeAll()
	}
}

// logRefusedPeers wraps a TLS provider so that a peer its config refuses
// (a certificate without the pinned key) is logged on stderr, which the
// supervisor's log carries. The supervisor itself may see no more than a
// closed connection: TLS 1.3 ends the client's handshake before the server
// has checked the client's certificate.
func logRefusedPeers(provider func() (*tls.Config, error), log hclog.Logger) func() (*tls.Config, error) {
	if provider == nil {
		return nil
	}
	return func() (*tls.Config, error) {
		c, err := provider()
		if err != nil || c.VerifyConnection == nil {
			return c, err
		}
		verify := c.VerifyConnection
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			err := verify(cs)
			if err != nil {
				log.Error("refused a TLS peer", "error", err)
			}
			return err
		}
		return c, nil
	}
}

// CPUProfileDirEnv names the environment variable that makes a serving
// sidecar write a CPU profile (runtime/pprof) of its whole life into
// <dir>/sidecar-<pid>.pprof, written when the supervisor stops it
// gracefully (its Stop call; a killed sidecar leaves an empty file). The
// supervisor passes PALYRA_SIDECAR_* variables through to its sidecars, so
// setting it in the supervisor's environment profiles every sidecar:
//
//	PALYRA_SIDECAR_CPUPROFILE_DIR=/tmp/prof go run ./cmd/palyra-bench --only B
//	go tool pprof bin/palyra-sidecar /tmp/prof/sidecar-1234.pprof
const CPUProfileDirEnv = "PALYRA_SIDECAR_CPUPROFILE_DIR"

// startCPUProfile starts the CPU profile CPUProfileDirEnv asks for and
// returns what stops it, which may be called more than once; a failure is
// reported on stderr and profiles nothing.
func startCPUProfile(dir string, stderr io.Writer) (stop func()) {
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("sidecar-%d.pprof", os.Getpid())))
	if err != nil {
		fmt.Fprintf(stderr, "palyra-sidecar: %s: %v\n", CPUProfileDirEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "palyra-sidecar: %s: %v\n", CPUProfileDirEnv, err)
		f.Close()
		return func() {}
	}
	return sync.OnceFunc(func() {
		pprof.StopCPUProfile()
		f.Close()
	})
}

// Main is the whole sidecar program, for cmd/palyra-sidecar and for an
// application that makes its own binary act as the sidecar (call it first in
// main when the process was started as one). It runs Run with os.Args and
// exits with its status.
func Main() {
	os.Exit(Run(os.Args[1:], ServeConfig{}, os.Stdout, os.Stderr))
}

// Run runs the sidecar program with args (without the program name) and
// returns the process exit status:
//
//	[HARDEN-FLAGS]                         serve the contract over go-plugin
//	precompile [HARDEN-FLAGS] --wasm FILE --cache-dir DIR [--sha256 HEX]
//	                                       compile FILE into the cache and
//	                                       print a PrecompileResult as JSON
//	version [--json] (or --version)        print the build information and
//	                                       the kernel's hardening support
//	                                       (VersionCommand); reads no module
//
// The serving and precompile modes harden the process first (package
// sidecar/internal/harden), before any module byte is read; HARDEN-FLAGS
// are those of sidecarplugin.HardenSpec (the supervisor builds them). A
// process whose hardening fails exits with status 1 without reading a
// module.
//
// The precompile mode is what the supervisor runs at install time, so that
// compiling untrusted code happens in a sidecar, never in the supervisor.
func Run(args []string, cfg ServeConfig, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		return runVersion(args[1:], stdout, stderr)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fs := flag.NewFlagSet("palyra-sidecar", flag.ContinueOnError)
		fs.SetOutput(stderr)
		var hf hardenFlags
		hf.register(fs, true)
		noPool := fs.Bool(sidecarplugin.FlagNoMemoryPool, false, "give every instance a fresh linear memory from wasmtime instead of the pool (before/after measurements)")
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() != 0 {
			fmt.Fprintf(stderr, "palyra-sidecar: unexpected argument %q\n", fs.Arg(0))
			return 2
		}
		cfg.Engine.NoMemoryPool = cfg.Engine.NoMemoryPool || *noPool
		if cfg.TLSClientKey == "" {
			cfg.TLSClientKey = os.Getenv(sidecarplugin.ClientKeyEnv)
		}
		// The profile file is opened before hardening closes the file
		// system.
		stop := startCPUProfile(os.Getenv(CPUProfileDirEnv), stderr)
		hr, later, err := hf.applyServe()
		if err != nil {
			stop()
			fmt.Fprintln(stderr, "palyra-sidecar:", err)
			return 1
		}
		cfg.hardening, cfg.laterHarden = hr, later
		if onStop := cfg.OnStop; onStop != nil {
			cfg.OnStop = func() { stop(); onStop() }
		} else {
			cfg.OnStop = stop
		}
		Serve(cfg)
		stop()
		return 0
	}
	switch args[0] {
	case "precompile":
		return runPrecompile(args[1:], cfg, stdout, stderr)
	case VersionCommand:
		return runVersion(args[1:], stdout, stderr)
	default:
		if c := extraCommands[args[0]]; c != nil {
			return c(args[1:], cfg, stdout, stderr)
		}
		fmt.Fprintf(stderr, "palyra-sidecar: unknown command %q (usage: palyra-sidecar [--harden...] | version [--json] | precompile [--harden...] --wasm FILE --cache-dir DIR [--sha256 HEX] [--cpu-seconds N] [--memory-bytes N])\n", args[0])
		return 2
	}
}

// PrecompileResult is what the precompile mode prints, as one JSON object on
// stdout, on success and on failure.
type PrecompileResult struct {
	// SHA256 is the hex sha256 of the module.
	SHA256 string `json:"sha256,omitempty"`
	// CachePath is the precompiled entry's file.
	CachePath string `json:"cache_path,omitempty"`
	// CacheStatus is the runtime's cache status: "miss" when compiled and
	// stored, "hit" when a valid entry was already there, "rejected" when
	// an invalid one was replaced.
	CacheStatus string `json:"cache_status,omitempty"`
	// ABIVersion is the guest ABI of this sidecar.
	ABIVersion string `json:"abi_version"`
	// Elapsed is how long precompiling took, in milliseconds.
	ElapsedMS int64 `json:"elapsed_ms"`
	// ErrorCode and Error are set on failure (exit status 1).
	ErrorCode string `json:"error_code,omitempty"`
	Error     string `json:"error,omitempty"`
	// Hardening is how the process hardened itself before it opened the
	// module.
	Hardening *sidecarv1.Hardening `json:"hardening,omitempty"`
}

func runPrecompile(args []string, cfg ServeConfig, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("precompile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	wasmPath := fs.String("wasm", "", "module `file` to compile")
	cacheDir := fs.String("cache-dir", "", "precompiled-module cache `dir`")
	want := fs.String("sha256", "", "expected lower-case hex sha256 of the module (optional)")
	var hf hardenFlags
	hf.register(fs, false)
	cpuSeconds := fs.Uint64("cpu-seconds", 0, "CPU-time cap in `seconds` (RLIMIT_CPU; 0: none)")
	memoryBytes := fs.Uint64("memory-bytes", 0, "memory cap in `bytes` (RLIMIT_DATA; 0: none)")
	noPool := fs.Bool(sidecarplugin.FlagNoMemoryPool, false, "compile for engines without the linear-memory pool (as the serving flag)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *wasmPath == "" || *cacheDir == "" || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "palyra-sidecar precompile: --wasm and --cache-dir are required")
		return 2
	}
	if err := applyCompileBudget(*cpuSeconds, *memoryBytes); err != nil {
		fmt.Fprintln(stderr, "palyra-sidecar precompile:", err)
		return 2
	}
	start := time.Now()
	res := PrecompileResult{ABIVersion: wasmrt.ABIVersion}
	err := func() error {
		var err error
		if res.Hardening, err = hf.apply([]string{*wasmPath}, []string{*cacheDir}); err != nil {
			return err
		}
		wasm, err := readModuleFile(*wasmPath)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(wasm)
		res.SHA256 = hex.EncodeToString(sum[:])
		if *want != "" && *want != res.SHA256 {
			return fmt.Errorf("%w: got %s, want %s", ErrModuleHashMismatch, res.SHA256, *want)
		}
		ecfg := cfg.Engine
		ecfg.CacheDir = *cacheDir
		ecfg.NoMemoryPool = ecfg.NoMemoryPool || *noPool
		ci, err := wasmrt.Precompile(ecfg, wasm)
		if err != nil {
			return err
		}
		res.CachePath = ci.Path
		res.CacheStatus = ci.Status.String()
		return nil
	}()
	res.ElapsedMS = time.Since(start).Milliseconds()
	status := 0
	if err != nil {
		res.ErrorCode, res.Error = errcode.Of(err), err.Error()
		status = 1
	}
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		fmt.Fprintln(stderr, "palyra-sidecar precompile:", err)
		return 1
	}
	return status
}

// extraCommands are commands of a test-only build (the escape probe of
// the palyraprobe build tag); empty in a production build.
var extraCommands = map[string]func(args []string, cfg ServeConfig, stdout, stderr io.Writer) int{}

// nonEmpty returns the non-empty strings of ss.
func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func readModuleFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModuleRead, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxModuleBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrModuleRead, err)
	}
	if len(b) > MaxModuleBytes {
		return nil, fmt.Errorf("%w: module over %d bytes", ErrModuleRead, MaxModuleBytes)
	}
	return b, nil
}
