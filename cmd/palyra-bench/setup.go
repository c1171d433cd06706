package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/buildinfo"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// trivialWasm is testdata/trivial.wat: a tool that writes a constant
// 16-byte output.
//
//go:embed testdata/trivial.wasm
var trivialWasm []byte

// trivialManifest is the manifest of the trivial WAT skills (%s: the
// skill id's last part).
const trivialManifest = `manifest_version = 2
skill_id = "bench.%s"
name = "Trivial"
version = "1.0.0"
publisher = "bench"

[[entrypoints.tools]]
id = "bench.trivial"
name = "trivial"
description = "Writes a constant output"
input_schema = { type = "object" }
output_schema = { type = "object" }

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`

// Inputs and outputs of the calls every scenario checks.
var (
	echoInput  = []byte(`{"text":"hello"}`)
	echoOutput = `{"echo":"hello"}`
	// trivialOutput is what trivial.wat writes; the raw go-plugin baseline
	// echoes echoInput, which has the same size.
	trivialOutput = `{"text":"hello"}`
)

// signedAt is the signing time of the bench's artifacts.
var signedAt = time.Unix(1_760_000_000, 0)

// env is what every scenario shares: the built binaries and modules, the
// signing key, a scratch directory.
type env struct {
	work string // scratch directory, removed at the end
	root string // repository root

	sidecar string // palyra-sidecar binary
	// sidecarNoGC is palyra-sidecar linked without buildinfo.SidecarLDFlags
	// (the build before that change), for scenario E's before/after row.
	sidecarNoGC string
	rawPlugin   string // the raw go-plugin baseline (host/supervisor/testdata/rawplugin)
	densityApp  string // the host-embedding app of scenario E (internal/densityapp)
	hostBin     string // palyra-host (reliability suite only)
	cliBin      string // palyra, the CLI (reliability suite only)

	echoWasm       []byte // sdk/examples/echo, the current SDK
	echoBeforeWasm []byte // the same example built with -tags palyra_sdk_json_envelope (the SDK before the scenario-A change)
	extismWasm     []byte // internal/peers/extismguest
	fetchWasm      []byte // sdk/examples/http-fetch (reliability suite only)

	key  ed25519.PrivateKey
	opts options

	echoArtifacts map[string][]byte // signed echo artifacts by skill id
}

// newEnv builds everything the scenarios need into a fresh scratch
// directory, which e.close removes.
func newEnv(ctx context.Context, o options, progress func(string, ...any)) (_ *env, err error) {
	root, err := examplebuild.RepoRoot()
	if err != nil {
		return nil, fmt.Errorf("find the repository: %w", err)
	}
	work, err := os.MkdirTemp("", "palyra-bench-")
	if err != nil {
		return nil, err
	}
	e := &env{work: work, root: root, opts: o, echoArtifacts: map[string][]byte{}}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	seed := make([]byte, ed25519.SeedSize)
	copy(seed, "palyra-bench signing key seed..")
	e.key = ed25519.NewKeyFromSeed(seed)

	if o.reliability {
		if err := e.buildReliability(ctx, progress); err != nil {
			return nil, err
		}
		return e, nil
	}
	bin := filepath.Join(work, "bin")
	progress("building palyra-sidecar, the raw go-plugin baseline and the density app")
	for _, b := range []struct {
		out   *string
		name  string
		pkg   string
		flags []string
	}{
		{&e.sidecar, "palyra-sidecar", "./cmd/palyra-sidecar", []string{"-ldflags=" + buildinfo.SidecarLDFlags}}, // as the README builds it
		{&e.sidecarNoGC, "palyra-sidecar-nogc", "./cmd/palyra-sidecar", nil},
		{&e.rawPlugin, "rawplugin", "./host/supervisor/testdata/rawplugin", nil},
		{&e.densityApp, "densityapp", "./cmd/palyra-bench/internal/densityapp", nil},
	} {
		*b.out = filepath.Join(bin, b.name)
		if err := e.goBuild(ctx, append(append(b.flags, "-o", *b.out), b.pkg)...); err != nil {
			return nil, err
		}
	}

	progress("building the echo example (current SDK and the SDK before the change) and the Extism guest")
	echoDir, err := examplebuild.Dir("echo")
	if err != nil {
		return nil, err
	}
	wasmDir := filepath.Join(work, "wasm")
	for _, m := range []struct {
		out  *[]byte
		file string
		tags []string
	}{
		{&e.echoWasm, "echo.wasm", nil},
		{&e.echoBeforeWasm, "echo-before.wasm", []string{"palyra_sdk_json_envelope"}},
	} {
		p := filepath.Join(wasmDir, m.file)
		if err := examplebuild.BuildWasip1(ctx, echoDir, p, m.tags...); err != nil {
			return nil, err
		}
		if *m.out, err = os.ReadFile(p); err != nil {
			return nil, err
		}
	}
	if e.extismWasm, err = buildExtismGuest(ctx, wasmDir); err != nil {
		return nil, err
	}
	return e, nil
}

// buildReliability builds what the reliability suite needs: palyra-sidecar,
// palyra-host, the palyra CLI, the echo example and the http-fetch example.
func (e *env) buildReliability(ctx context.Context, progress func(string, ...any)) error {
	bin := filepath.Join(e.work, "bin")
	progress("building palyra-sidecar, palyra-host and palyra")
	// One go build for the three: their links run in parallel.
	if err := e.goBuild(ctx, "-ldflags="+buildinfo.SidecarLDFlags, "-o", bin+string(filepath.Separator), "./cmd/palyra-sidecar", "./cmd/palyra-host", "./cmd/palyra"); err != nil {
		return err
	}
	e.sidecar, e.hostBin, e.cliBin = filepath.Join(bin, "palyra-sidecar"), filepath.Join(bin, "palyra-host"), filepath.Join(bin, "palyra")
	progress("building the echo and http-fetch examples")
	for _, m := range []struct {
		out     *[]byte
		example string
	}{
		{&e.echoWasm, "echo"},
		{&e.fetchWasm, "http-fetch"},
	} {
		dir, err := examplebuild.Dir(m.example)
		if err != nil {
			return err
		}
		p := filepath.Join(e.work, "wasm", m.example+".wasm")
		if err := examplebuild.BuildWasip1(ctx, dir, p); err != nil {
			return err
		}
		if *m.out, err = os.ReadFile(p); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) close() { os.RemoveAll(e.work) }

// goBuild runs `go build args...` in the repository root (the go.work
// there puts this module and the main one in one workspace).
func (e *env) goBuild(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, examplebuild.GoCommand(), append([]string{"build"}, args...)...)
	cmd.Dir = e.root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return nil
}

// publicKeyHex is the bench key's public half in hex.
func (e *env) publicKeyHex() string {
	return hex.EncodeToString(e.key.Public().(ed25519.PublicKey))
}

// installRequest installs data trusting the bench key for the publishers
// it signs as.
func (e *env) installRequest(data []byte) host.InstallRequest {
	pub := e.publicKeyHex()
	return host.InstallRequest{Artifact: data, TrustedPublishers: []host.TrustedKey{
		{Publisher: "palyra", PublicKeyHex: pub}, {Publisher: "bench", PublicKeyHex: pub},
	}}
}

// echoArtifact signs the echo example's module wasm as skill id skillID,
// once per skill id: a skill id always names the same module here.
func (e *env) echoArtifact(skillID string, wasm []byte) ([]byte, error) {
	if a, ok := e.echoArtifacts[skillID]; ok {
		return a, nil
	}
	dir, err := examplebuild.Dir("echo")
	if err != nil {
		return nil, err
	}
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	manifest, err := read("skill.toml")
	if err != nil {
		return nil, err
	}
	manifest = bytes.Replace(manifest, []byte(`skill_id = "palyra.echo"`), []byte(fmt.Sprintf("skill_id = %q", skillID)), 1)
	sbom, err := read("sbom.cdx.json")
	if err != nil {
		return nil, err
	}
	prov, err := read("provenance.json")
	if err != nil {
		return nil, err
	}
	b, err := artifact.Build(artifact.BuildInput{
		Manifest: manifest, Modules: []artifact.File{{Path: "echo.wasm", Data: wasm}},
		SBOM: sbom, Provenance: prov, SigningKey: e.key, SignedAt: signedAt,
	})
	if err != nil {
		return nil, fmt.Errorf("sign %s: %w", skillID, err)
	}
	e.echoArtifacts[skillID] = b.Bytes
	return b.Bytes, nil
}

// trivialArtifact signs trivial.wat as skill bench.<name>.
func (e *env) trivialArtifact(name string) ([]byte, error) {
	b, err := artifact.Build(artifact.BuildInput{
		Manifest:   []byte(fmt.Sprintf(trivialManifest, name)),
		Modules:    []artifact.File{{Path: "trivial.wasm", Data: trivialWasm}},
		SBOM:       []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`),
		Provenance: []byte(`{"builder":{"id":"palyra-bench"},"subject":[{"name":"modules/trivial.wasm"}]}`),
		SigningKey: e.key, SignedAt: signedAt,
	})
	if err != nil {
		return nil, fmt.Errorf("sign bench.%s: %w", name, err)
	}
	return b.Bytes, nil
}

// openHost opens a host on a new state directory under the scratch dir;
// closeHost closes it and removes its socket directory. withSidecar false
// gives an install-only host (no precompile, no calls).
func (e *env) openHost(ctx context.Context, name string, withSidecar bool, sc supervisor.Config) (h *host.Host, state string, closeHost func(), err error) {
	return e.openHostAt(ctx, filepath.Join(e.work, "state-"+name), withSidecar, sc)
}

// openHostAt is openHost on the state directory state.
func (e *env) openHostAt(ctx context.Context, state string, withSidecar bool, sc supervisor.Config) (h *host.Host, _ string, closeHost func(), err error) {
	sidecar := ""
	if withSidecar {
		sidecar = e.sidecar
	}
	return e.openHostWith(ctx, state, sidecar, sc)
}

// openHostWith is openHostAt with the sidecar binary sidecar ("" for
// none).
func (e *env) openHostWith(ctx context.Context, state, sidecar string, sc supervisor.Config) (h *host.Host, _ string, closeHost func(), err error) {
	name := filepath.Base(state)
	sock, err := os.MkdirTemp("", "pb")
	if err != nil {
		return nil, "", nil, err
	}
	sc.SocketDir = sock
	cfg := host.Config{StateDir: state, Logger: hclog.NewNullLogger(), Supervisor: sc, SidecarPath: sidecar}
	h, err = host.Open(ctx, cfg)
	if err != nil {
		os.RemoveAll(sock)
		return nil, "", nil, fmt.Errorf("open host %s: %w", name, err)
	}
	return h, state, func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = h.Close(cctx)
		os.RemoveAll(sock)
	}, nil
}

// install installs data on h and checks it is active.
func (e *env) install(ctx context.Context, h *host.Host, data []byte) (*host.InstallResult, error) {
	res, err := h.Install(ctx, e.installRequest(data))
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	if res.Status != "active" {
		return nil, fmt.Errorf("install %s: status %s %v", res.SkillID, res.Status, res.Reasons)
	}
	return res, nil
}

// installTrivialAndEcho installs the trivial WAT tool (bench.trivial) and
// the echo example (palyra.echo) on h.
func (e *env) installTrivialAndEcho(ctx context.Context, h *host.Host) error {
	trivial, err := e.trivialArtifact("trivial")
	if err != nil {
		return err
	}
	echo, err := e.echoArtifact("palyra.echo", e.echoWasm)
	if err != nil {
		return err
	}
	for _, a := range [][]byte{trivial, echo} {
		if _, err := e.install(ctx, h, a); err != nil {
			return err
		}
	}
	return nil
}
