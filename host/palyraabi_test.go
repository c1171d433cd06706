package host_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/internal/testskill"
)

// palyraVectors holds Palyra's echo-http example and the derived modules
// (testdata/vectors/README.md).
const palyraVectors = "../testdata/vectors"

// buildPalyraExample packages Palyra's echo-http example as Palyra's CLI
// lifecycle test does (its manifest, prompt asset, SBOM and provenance,
// the test key 0x01×32), with module as modules/module.wasm and the
// manifest's version replaced by version. It returns the artifact and the
// publisher key in hex.
func buildPalyraExample(t *testing.T, module []byte, version string) ([]byte, string) {
	t.Helper()
	dir := filepath.Join(palyraVectors, "palyra-echo-http-example")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	mf := string(read("skill.toml"))
	if version != "1.0.0" {
		mf = strings.Replace(mf, `version = "1.0.0"`, `version = "`+version+`"`, 1)
	}
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = 0x01
	}
	key := ed25519.NewKeyFromSeed(seed)
	built, err := artifact.Build(artifact.BuildInput{
		Manifest:   []byte(mf),
		Modules:    []artifact.File{{Path: "module.wasm", Data: module}},
		Assets:     []artifact.File{{Path: "prompt.txt", Data: read("assets/prompt.txt")}},
		SBOM:       read("sbom.cdx.json"),
		Provenance: read("provenance.json"),
		SigningKey: key,
		SignedAt:   testskill.SignedAt,
	})
	if err != nil {
		t.Fatal(err)
	}
	return built.Bytes, hex.EncodeToString(key.Public().(ed25519.PublicKey))
}

func readVector(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(palyraVectors, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPalyraEchoHTTPExample is the exit-code rule (docs/palyra-compat.md):
// Palyra's echo-http example, its manifest unchanged with a module that
// follows Palyra's ABI, installs and its tool runs through the real host
// and sidecar, giving {"exit_code": N} although the tool's output_schema
// wants {echo}. A module under the same manifest that writes output is
// still checked against the schema, a sidecar that claims more than the
// exit code for a Palyra module is refused, and Palyra's empty example
// module is refused at audit.
func TestPalyraEchoHTTPExample(t *testing.T) {
	ctx := context.Background()
	h, state := openHostWith(t, supervisor.Config{})
	// http_count.wasm imports Palyra's http-count and returns it from run:
	// with the manifest's one host granted, the exit code is 1.
	data, pub := buildPalyraExample(t, readVector(t, "derived/http_count.wasm"), "1.0.0")
	trusted := []host.TrustedKey{{Publisher: "acme", PublicKeyHex: pub}}
	ir, err := h.Install(ctx, host.InstallRequest{Artifact: data, TrustedPublishers: trusted})
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if ir.Status != "active" || !ir.Current {
		t.Fatalf("installed %+v", ir)
	}
	call := func(h *host.Host, input string) (*host.CallResult, error) {
		return h.Call(ctx, host.CallRequest{SkillID: "acme.echo_http", ToolID: "acme.echo", Input: json.RawMessage(input)})
	}
	res, err := call(h, `{"text":"hi"}`)
	if err != nil {
		t.Fatalf("call of the Palyra module: %v", err)
	}
	if string(res.Output) != `{"exit_code":1}` || res.ExitCode != 1 || res.Version != "1.0.0" {
		t.Fatalf("result output %s exit_code %d version %s; want {\"exit_code\":1}", res.Output, res.ExitCode, res.Version)
	}
	// The input is still checked against the input_schema.
	if _, err := call(h, `{"txt":"hi"}`); errcode.Of(err) != "invalid_input" {
		t.Fatalf("input without text: %v, want invalid_input", err)
	}

	// A sidecar that answers with its input as output (for all the host
	// can tell, a compromised one): a Palyra module cannot write output,
	// so anything but {"exit_code": N} is refused, even a document that
	// holds an exit_code beside other fields.
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sock)
	liar, err := host.Open(ctx, host.Config{StateDir: state, SidecarPath: liarPath, Supervisor: supervisor.Config{SocketDir: sock}})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{`{"text":"hi"}`, `{"text":"hi","exit_code":0}`} {
		res, err := call(liar, in)
		if !errors.Is(err, host.ErrInvalidOutput) || (res != nil && res.Output != nil) {
			t.Errorf("lying sidecar, input %s: output %+v, err %v; want invalid_output and no output", in, res, err)
		}
	}
	if err := liar.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}

	// The same manifest with a module that writes output (the WAT echo:
	// its whole input document, no "echo"): validated as before.
	wat, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ = buildPalyraExample(t, wat, "1.1.0")
	if ir, err := h.Install(ctx, host.InstallRequest{Artifact: data}); err != nil || !ir.Current {
		t.Fatalf("install 1.1.0: %v %+v", err, ir)
	}
	res, err = call(h, `{"text":"hi"}`)
	if !errors.Is(err, host.ErrInvalidOutput) || errcode.Of(err) != "invalid_output" {
		t.Fatalf("module writing output off its schema: %v, want invalid_output", err)
	}
	if res != nil && res.Output != nil {
		t.Errorf("unchecked output handed back: %s", res.Output)
	}
	if !strings.Contains(err.Error(), "echo") {
		t.Errorf("message %q does not name the schema's failure", err)
	}

	// Palyra's own example module (8 bytes, no exports): refused at audit,
	// installed quarantined with the wasm_entrypoint finding.
	h2, _ := openHostWith(t, supervisor.Config{})
	data, _ = buildPalyraExample(t, readVector(t, "palyra-echo-http-example/module.wasm"), "1.0.0")
	ir, err = h2.Install(ctx, host.InstallRequest{Artifact: data, TrustedPublishers: trusted})
	if errcode.Of(err) != "audit_failed" || ir == nil || ir.Status != "quarantined" {
		t.Fatalf("install of the empty example: %v %+v; want audit_failed, quarantined", err, ir)
	}
	if !slices.ContainsFunc(ir.Reasons, func(r string) bool { return strings.Contains(r, "exports no entrypoint") }) {
		t.Errorf("reasons %q do not say the module exports no entrypoint", ir.Reasons)
	}
	ar, err := h2.Audit(ctx, host.SkillRef{SkillID: "acme.echo_http"})
	if err != nil {
		t.Fatal(err)
	}
	if ar.Passed || !slices.Contains(ar.Report.FailedChecks(), "wasm_entrypoint") {
		t.Errorf("audit of the empty example: passed=%t failed=%v", ar.Passed, ar.Report.FailedChecks())
	}
	if _, err := h2.Call(ctx, host.CallRequest{SkillID: "acme.echo_http", ToolID: "acme.echo", Input: json.RawMessage(`{"text":"hi"}`)}); errcode.Of(err) != "skill_quarantined" {
		t.Errorf("call of the empty example: %v, want skill_quarantined", err)
	}
}

// TestPalyraExampleInline: the exit-code rule holds on RunInline (palyra
// dev run) too: echo-http's manifest with a Palyra module gives the exit
// code; with the WAT echo, which writes output, the schema applies.
func TestPalyraExampleInline(t *testing.T) {
	ctx := context.Background()
	h := openInlineHost(t, inlineProfile(nil))
	mf := string(readVector(t, "palyra-echo-http-example/skill.toml"))
	res, err := h.RunInline(ctx, host.InlineRunRequest{Module: readVector(t, "derived/http_count.wasm"), Manifest: mf, ToolID: "acme.echo", Input: json.RawMessage(`{"text":"hi"}`)})
	if err != nil {
		t.Fatalf("inline Palyra module: %v", err)
	}
	if string(res.Output) != `{"exit_code":1}` || res.ExitCode != 1 {
		t.Fatalf("inline result %s exit %d; want {\"exit_code\":1}", res.Output, res.ExitCode)
	}
	_, err = h.RunInline(ctx, host.InlineRunRequest{Module: testWasm(t, "echo"), Manifest: mf, ToolID: "acme.echo", Input: json.RawMessage(`{"text":"hi"}`)})
	if errcode.Of(err) != "invalid_output" {
		t.Fatalf("inline module writing output off its schema: %v, want invalid_output", err)
	}
}
