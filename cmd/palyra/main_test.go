package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/internal/buildinfo"
)

func TestMain(m *testing.M) {
	// Daemon mode is chosen by these; the tests set them where they mean to.
	os.Unsetenv(client.EnvURL)
	os.Unsetenv(client.EnvToken)
	// Made here, before any test changes TMPDIR (and removes what it points to).
	dir, err := os.MkdirTemp("", "palyra-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sidecarDir = dir
	code := m.Run()
	os.RemoveAll(sidecarDir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var (
	sidecarOnce sync.Once
	sidecarDir  string // holds the palyra-sidecar built for the tests; made and removed by TestMain
	sidecarErr  error
)

// sidecarBinary builds palyra-sidecar once per test run and returns its
// path.
func sidecarBinary(t *testing.T) string {
	t.Helper()
	sidecarOnce.Do(func() {
		// go test puts its own GOROOT/bin first in PATH.
		out, err := exec.Command("go", "build", "-ldflags="+buildinfo.SidecarLDFlags, "-o", sidecarDir+"/",
			"github.com/palyra-go/palyra/cmd/palyra-sidecar").CombinedOutput()
		if err != nil {
			sidecarErr = fmt.Errorf("building palyra-sidecar: %v\n%s", err, out)
		}
	})
	if sidecarErr != nil {
		t.Fatal(sidecarErr)
	}
	return filepath.Join(sidecarDir, "palyra-sidecar")
}

const (
	vectors  = "../../testdata/vectors"
	example  = vectors + "/palyra-echo-http-example"
	seed01   = "0101010101010101010101010101010101010101010101010101010101010101"
	echoPub  = "8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"
	echoHash = "2cbb2c29046ab416ca420eade941570c07120fc6edaad2ec4d517bc4ce2d9596"
)

// result is one CLI invocation's outcome.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs palyra in-process with a private state dir and stdin.
func cli(t *testing.T, state, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"--state-dir", state}, args...)
	code := run(context.Background(), full, strings.NewReader(stdin), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// errorCode decodes a --json failure and returns its code.
func (r result) errorCode(t *testing.T) string {
	t.Helper()
	var rep errorReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("failure output is not an error report: %v\n%s", err, r.stdout)
	}
	if rep.Error.Code == "" || rep.Error.Message == "" {
		t.Fatalf("error report lacks code or message: %s", r.stdout)
	}
	return rep.Error.Code
}

func (r result) decode(t *testing.T, v any) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("decode %s: %v", r.stdout, err)
	}
}

func buildArgs(out string) []string {
	return []string{"skills", "package", "build", "--json",
		"--manifest", mustAbs(example + "/skill.toml"),
		"--module", mustAbs(example + "/module.wasm"),
		"--asset", mustAbs(example + "/assets/prompt.txt"),
		"--sbom", mustAbs(example + "/sbom.cdx.json"),
		"--provenance", mustAbs(example + "/provenance.json"),
		"--output", out}
}

func mustAbs(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return abs
}

func TestKeysGenerateAndPublic(t *testing.T) {
	state := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "k.key")
	var gen keyReport
	cli(t, state, "", "keys", "generate", "--json", "--out", keyFile).decode(t, &gen)
	st, err := os.Stat(keyFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode = %v, %v; want 0600", st.Mode(), err)
	}
	data, _ := os.ReadFile(keyFile)
	if seed, err := hex.DecodeString(strings.TrimSpace(string(data))); err != nil || len(seed) != ed25519.SeedSize {
		t.Fatalf("key file is not a hex seed: %q", data)
	}
	if !strings.HasPrefix(gen.KeyID, "ed25519:") || len(gen.PublicKeyHex) != 64 {
		t.Fatalf("generate report = %+v", gen)
	}
	var pub keyReport
	cli(t, state, "", "keys", "public", "--json", "--key", keyFile).decode(t, &pub)
	if pub.PublicKeyHex != gen.PublicKeyHex || pub.KeyID != gen.KeyID {
		t.Fatalf("public = %+v, generate = %+v", pub, gen)
	}
	r := cli(t, state, "", "keys", "generate", "--json", "--out", keyFile)
	if r.code != exitFailure || r.errorCode(t) != "key_exists" {
		t.Fatalf("second generate: exit %d, %s", r.code, r.stdout)
	}
	if again, _ := os.ReadFile(keyFile); !bytes.Equal(again, data) {
		t.Fatal("existing key file was overwritten")
	}
}

func TestKeysPublicVectorKey(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "k.key")
	if err := os.WriteFile(keyFile, []byte(seed01+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var pub keyReport
	cli(t, t.TempDir(), "", "keys", "public", "--json", "--key", keyFile).decode(t, &pub)
	if pub.PublicKeyHex != echoPub || pub.KeyID != "ed25519:34750f98bd59fcfc" {
		t.Fatalf("public = %+v", pub)
	}
}

func TestPackageBuildVerifyTOFU(t *testing.T) {
	state := t.TempDir()
	out := filepath.Join(t.TempDir(), "echo.palyra-skill")
	var built buildReport
	cli(t, state, seed01, append(buildArgs(out), "--signing-key-stdin")...).decode(t, &built)
	if built.SkillID != "acme.echo_http" || built.Publisher != "acme" || built.SignatureKeyID != "ed25519:34750f98bd59fcfc" || built.ArtifactBytes == 0 {
		t.Fatalf("build report = %+v", built)
	}

	r := cli(t, state, "", "skills", "package", "verify", "--json", "--artifact", out)
	if r.code != exitFailure || r.errorCode(t) != "untrusted_publisher" {
		t.Fatalf("verify without TOFU: exit %d %s", r.code, r.stdout)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--allow-tofu"}, "tofu_newly_pinned"},
		{nil, "tofu_pinned"},
	} {
		var rep struct {
			Accepted      bool   `json:"accepted"`
			TrustDecision string `json:"trust_decision"`
			PayloadSHA256 string `json:"payload_sha256"`
		}
		args := append([]string{"skills", "package", "verify", "--json", "--artifact", out}, tc.args...)
		cli(t, state, "", args...).decode(t, &rep)
		if !rep.Accepted || rep.TrustDecision != tc.want || rep.PayloadSHA256 != built.PayloadSHA256 {
			t.Fatalf("verify %v = %+v, want %s", tc.args, rep, tc.want)
		}
	}
	// The store now pins acme to the 0x01 key: byte for byte Palyra's file.
	got, err := os.ReadFile(filepath.Join(state, "skills", "trust-store.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(mustAbs(vectors + "/derived/trust-store.after-tofu-echo.json"))
	if strings.TrimSpace(string(got)) != strings.TrimSpace(string(want)) {
		t.Fatalf("trust store after TOFU:\n%s\nwant:\n%s", got, want)
	}

	// One byte of the module changed, signature.json kept: refused.
	tampered := filepath.Join(t.TempDir(), "tampered.palyra-skill")
	rewriteZip(t, out, tampered, "modules/module.wasm")
	r = cli(t, state, "", "skills", "package", "verify", "--json", "--artifact", tampered)
	if r.code != exitFailure || r.errorCode(t) != "payload_hash_mismatch" {
		t.Fatalf("tampered verify: exit %d %s", r.code, r.stdout)
	}
	r = cli(t, state, "", "skills", "package", "verify", "--artifact", tampered)
	if r.code != exitFailure || r.stdout != "" || !strings.Contains(r.stderr, "[payload_hash_mismatch]") {
		t.Fatalf("tampered verify (text): exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestPackageBuildIsReproducible(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1730000000")
	dir := t.TempDir()
	var sums []string
	for _, name := range []string{"a.palyra-skill", "b.palyra-skill"} {
		out := filepath.Join(dir, name)
		var rep buildReport
		cli(t, t.TempDir(), seed01, append(buildArgs(out), "--signing-key-stdin")...).decode(t, &rep)
		data, _ := os.ReadFile(out)
		sums = append(sums, string(data))
	}
	if sums[0] != sums[1] {
		t.Fatal("two builds of the same inputs differ")
	}
}

func TestVerifyVectorAllowlisted(t *testing.T) {
	state := t.TempDir()
	art := mustAbs(vectors + "/derived/acme.echo_http-1.0.0.palyra-skill")
	var rep struct {
		TrustDecision    string `json:"trust_decision"`
		PayloadSHA256    string `json:"payload_sha256"`
		ManifestWarnings []struct {
			Code string `json:"code"`
		} `json:"manifest_warnings"`
	}
	cli(t, state, "", "skills", "package", "verify", "--json", "--artifact", art, "--trusted-publisher", "acme="+echoPub).decode(t, &rep)
	if rep.TrustDecision != "allowlisted" || rep.PayloadSHA256 != echoHash {
		t.Fatalf("verify = %+v", rep)
	}
	// --trusted-publisher is persisted: a second verify needs no flag.
	cli(t, state, "", "skills", "package", "verify", "--json", "--artifact", art).decode(t, &rep)
	if rep.TrustDecision != "allowlisted" {
		t.Fatalf("second verify = %+v", rep)
	}
	other := strings.Repeat("ab", 32)
	r := cli(t, t.TempDir(), "", "skills", "package", "verify", "--json", "--artifact", art, "--trusted-publisher", "acme="+other)
	if r.code != exitFailure || r.errorCode(t) != "trusted_publisher_key_mismatch" {
		t.Fatalf("mismatch verify: exit %d %s", r.code, r.stdout)
	}

	var ins inspectReport
	cli(t, state, "", "skills", "package", "inspect", "--json", "--artifact", art).decode(t, &ins)
	if ins.PayloadSHA256 != echoHash || ins.KeyID != "ed25519:34750f98bd59fcfc" || len(ins.Entries) != 6 {
		t.Fatalf("inspect = %+v", ins)
	}
}

func TestKeyRotation(t *testing.T) {
	state := t.TempDir()
	dir := t.TempDir()
	oldKey := filepath.Join(dir, "old.key")
	if err := os.WriteFile(oldKey, []byte(seed01), 0o600); err != nil {
		t.Fatal(err)
	}
	newKey := filepath.Join(dir, "new.key")
	var gen keyReport
	cli(t, state, "", "keys", "generate", "--json", "--out", newKey).decode(t, &gen)

	oldArt := filepath.Join(dir, "old.palyra-skill")
	newArt := filepath.Join(dir, "new.palyra-skill")
	var rep buildReport
	cli(t, state, "", append(buildArgs(oldArt), "--signing-key", oldKey)...).decode(t, &rep)
	cli(t, state, "", append(buildArgs(newArt), "--signing-key", newKey)...).decode(t, &rep)

	var v struct {
		TrustDecision string `json:"trust_decision"`
	}
	cli(t, state, "", "skills", "package", "verify", "--json", "--artifact", oldArt, "--allow-tofu").decode(t, &v)
	r := cli(t, state, "", "skills", "package", "verify", "--json", "--artifact", newArt)
	if r.code != exitFailure || r.errorCode(t) != "tofu_key_mismatch" {
		t.Fatalf("new key before rotation: exit %d %s", r.code, r.stdout)
	}

	stmt := filepath.Join(dir, "rotation.json")
	var rot rotationReport
	cli(t, state, "", "keys", "rotate", "--json", "--publisher", "acme", "--old-key", oldKey, "--new-key", newKey, "--output", stmt).decode(t, &rot)
	if rot.NewKeyID != gen.KeyID {
		t.Fatalf("rotate report = %+v, new key %s", rot, gen.KeyID)
	}
	var applied rotateReport
	cli(t, state, "", "trust", "rotate", "--json", "--statement", stmt).decode(t, &applied)

	cli(t, state, "", "skills", "package", "verify", "--json", "--artifact", newArt).decode(t, &v)
	if v.TrustDecision != "tofu_pinned" {
		t.Fatalf("new key after rotation = %+v", v)
	}
	r = cli(t, state, "", "skills", "package", "verify", "--json", "--artifact", oldArt)
	if r.code != exitFailure || r.errorCode(t) != "tofu_key_mismatch" {
		t.Fatalf("old key after rotation: exit %d %s", r.code, r.stdout)
	}
	// A statement for a publisher the store does not know is refused.
	r = cli(t, t.TempDir(), "", "trust", "rotate", "--json", "--statement", stmt)
	if r.code != exitFailure || r.errorCode(t) != "rotation_not_applicable" {
		t.Fatalf("rotation on empty store: exit %d %s", r.code, r.stdout)
	}
}

func TestUsageErrors(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(keyFile, []byte(seed01), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "x.palyra-skill")
	tests := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"missing required flag", []string{"skills", "package", "verify", "--json"}, ""},
		{"unknown flag", []string{"keys", "public", "--json", "--nope"}, ""},
		{"unknown command", []string{"keys", "frobnicate", "--json"}, ""},
		{"both key sources", append(buildArgs(out), "--signing-key", keyFile, "--signing-key-stdin"), seed01},
		{"no key source", buildArgs(out), ""},
		{"bad trusted publisher", []string{"skills", "package", "verify", "--json", "--artifact", out, "--trusted-publisher", "acme"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, t.TempDir(), tt.stdin, tt.args...)
			if r.code != exitUsage || r.errorCode(t) != "usage" {
				t.Fatalf("exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	badKey := filepath.Join(dir, "bad.key")
	if err := os.WriteFile(badKey, []byte("too short"), 0o600); err != nil {
		t.Fatal(err)
	}
	badManifest := filepath.Join(dir, "skill.toml")
	if err := os.WriteFile(badManifest, []byte("skill_id = \"acme.x\"\nbogus = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o.palyra-skill")
	withManifest := func(m string) []string {
		a := buildArgs(out)
		for i := range a {
			if a[i] == "--manifest" {
				a[i+1] = m
			}
		}
		return a
	}
	tests := []struct {
		name, want string
		args       []string
		stdin      string
	}{
		{"bad key", "invalid_signing_key", append(buildArgs(out), "--signing-key", badKey), ""},
		{"missing key file", "io_error", append(buildArgs(out), "--signing-key", filepath.Join(dir, "nope")), ""},
		{"manifest unknown key", "manifest_parse", append(withManifest(badManifest), "--signing-key-stdin"), seed01},
		{"module not .wasm", "manifest_validation", []string{"skills", "package", "build", "--json", "--manifest", mustAbs(example + "/skill.toml"), "--module", mustAbs(example + "/sbom.cdx.json"), "--sbom", mustAbs(example + "/sbom.cdx.json"), "--provenance", mustAbs(example + "/provenance.json"), "--output", out, "--signing-key-stdin"}, seed01},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := cli(t, t.TempDir(), tt.stdin, tt.args...)
			if r.code != exitFailure || r.errorCode(t) != tt.want {
				t.Fatalf("exit %d, stdout %s, stderr %s; want %s", r.code, r.stdout, r.stderr, tt.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatal("a failed build left an artifact behind")
			}
		})
	}
}

func TestErrorCodesListsTheContract(t *testing.T) {
	var rep struct {
		Codes []struct {
			Code string `json:"code"`
		} `json:"codes"`
	}
	cli(t, t.TempDir(), "", "error-codes", "--json").decode(t, &rep)
	have := map[string]bool{}
	for _, c := range rep.Codes {
		have[c.Code] = true
	}
	for _, want := range []string{
		"payload_hash_mismatch", "signature_verification_failed", "untrusted_publisher",
		"trusted_publisher_key_mismatch", "tofu_key_mismatch", "invalid_artifact_path",
		"duplicate_artifact_entry", "artifact_too_large", "artifact_entry_too_large",
		"too_many_entries", "missing_artifact_entry", "manifest_parse", "manifest_validation",
		"invalid_sbom", "invalid_provenance", "unsupported_protocol_major",
		"unsupported_runtime_version", "usage", "key_exists",
		// daemon mode and hooks
		"daemon_unreachable", "unauthorized", "admin_token_file_invalid", "purge_needs_all_versions", "override_required",
		"hook_not_found", "hook_exists", "unknown_hook_event", "hook_decision_not_allowed", "hook_timeout", "invalid_hook_payload",
	} {
		if !have[want] {
			t.Errorf("error-codes lacks %q", want)
		}
	}
}

// rewriteZip copies a ZIP, flipping one byte in the middle of entry.
func rewriteZip(t *testing.T, in, out, entry string) {
	t.Helper()
	zr, err := zip.OpenReader(in)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if f.Name == entry {
			data[len(data)/2] ^= 0x01
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
