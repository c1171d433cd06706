package daemon_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/cluster"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/buildinfo"
)

// TestDeploymentConfig covers the deployment key of the configuration:
// the default, the names, and what "hardened" requires of the rest.
func TestDeploymentConfig(t *testing.T) {
	const tlsTable = "[tls]\ncert_file = \"c.pem\"\nkey_file = \"k.pem\"\n"
	tests := []struct {
		name, toml  string
		want        daemon.Deployment
		wantErr     string
		wantAnomaly bool
	}{
		{name: "default is local", toml: "", want: daemon.DeploymentLocal},
		{name: "local", toml: "deployment = \"local\"\n", want: daemon.DeploymentLocal},
		{name: "hardened with tls", toml: "deployment = \"hardened\"\n" + tlsTable, want: daemon.DeploymentHardened, wantAnomaly: true},
		{name: "hardened without tls", toml: "deployment = \"hardened\"\n", wantErr: "requires TLS"},
		{name: "hardened off loopback without tls", toml: "deployment = \"hardened\"\nlisten = \"0.0.0.0:7142\"\n", wantErr: "requires TLS"},
		{name: "hardened with mcp allow", toml: "deployment = \"hardened\"\n" + tlsTable + "[mcp]\napproval_without_elicitation = \"allow\"\n", wantErr: "approval_without_elicitation"},
		{name: "unknown", toml: "deployment = \"paranoid\"\n", wantErr: `deployment "paranoid": use local or hardened`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := daemon.ParseConfig([]byte(tt.toml))
			if tt.wantErr != "" {
				if !errors.Is(err, daemon.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want daemon_config_invalid naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Deployment != tt.want || (c.Anomaly != nil) != tt.wantAnomaly {
				t.Fatalf("deployment %q, anomaly %v; want %q, anomaly set %t", c.Deployment, c.Anomaly, tt.want, tt.wantAnomaly)
			}
		})
	}
}

// TestStrictEgress judges operator profiles as "hardened" does.
func TestStrictEgress(t *testing.T) {
	for _, tt := range []struct{ name, profile, want string }{
		{"default", "", ""},
		{"narrow private hole", "[http]\nallowed_private_networks = [\"10.0.0.5/32\"]\n", ""},
		{"allow_private", "[http]\nallow_private = true\n", "http.allow_private = true"},
		{"plain http", "[http]\nallowed_schemes = [\"https\", \"http\"]\n", `allowed_schemes has "http"`},
		{"wildcards", "[capabilities]\nallow_wildcards = true\n", "capabilities.allow_wildcards = true"},
		{"inline modules", "[dev]\nallow_inline = true\n", "dev.allow_inline = true"},
	} {
		p, err := policy.Parse([]byte(tt.profile))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		err = daemon.StrictEgress(p)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if !errors.Is(err, daemon.ErrDeploymentRefused) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want deployment_refused naming %q", tt.name, err, tt.want)
		}
	}
}

// TestHardenedRefusesWithoutTLS runs palyra-host serve --deployment
// hardened without TLS: it does not start, exits 1 and says what to do.
func TestHardenedRefusesWithoutTLS(t *testing.T) {
	state := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "palyra-host"), "serve", "--state-dir", state, "--listen", "127.0.0.1:0", "--deployment", "hardened")
	cmd.Env = append(os.Environ(), "PALYRA_SIDECAR="+filepath.Join(bin, "palyra-sidecar"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("serve --deployment hardened without TLS: %v, want exit status 1", err)
	}
	if msg := stderr.String(); !strings.Contains(msg, "daemon_config_invalid") || !strings.Contains(msg, "requires TLS: set [tls] cert_file and key_file") {
		t.Fatalf("stderr: %s", msg)
	}
	if _, err := os.Stat(daemon.InfoPath(state)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a daemon.json was written: %v", err)
	}
}

// TestHardenedRefusesToOpen shows the refusals of Open under "hardened":
// the sidecar hardening turned off, a kernel without Landlock and a
// sidecar of another ABI (as the sidecar reports them), a cluster without TLS, an operator
// profile whose egress is not strict, and a trust store holding keys
// pinned on first use. Nothing is left locked: a local daemon opens the state
// directory afterwards.
func TestHardenedRefusesToOpen(t *testing.T) {
	certFile, keyFile, _ := selfSigned(t, t.TempDir())
	cfg := hardenedConfig(t, certFile, keyFile)
	ctx := context.Background()
	state := t.TempDir()
	sidecar := filepath.Join(bin, "palyra-sidecar")
	_, err := daemon.Open(ctx, daemon.Options{StateDir: state, Config: cfg, SidecarPath: sidecar, Supervisor: supervisor.Config{Hardening: supervisor.HardeningConfig{Off: true}}})
	if !errors.Is(err, daemon.ErrInvalidConfig) || !strings.Contains(err.Error(), "drop --no-harden-sidecars") {
		t.Fatalf("hardening off: %v", err)
	}
	// A sidecar reporting a kernel without Landlock, and one of another
	// ABI (scripts answering the version command as the sidecar does).
	noLandlock := buildinfo.Get("palyra-sidecar")
	noLandlock.Kernel = &buildinfo.KernelSupport{Linux: true, LandlockTarget: 7, Seccomp: true, NoNewPrivs: true}
	otherABI := noLandlock
	otherABI.ABI = "palyra.skills.abi.v2"
	for _, tt := range []struct {
		info buildinfo.Info
		want error
		says string
	}{
		{noLandlock, daemon.ErrInvalidConfig, "cannot apply: missing Landlock (Linux 5.13 or later"},
		{otherABI, host.ErrSidecarMismatch, "abi palyra.skills.abi.v2, want palyra.skills.abi.v1"},
	} {
		b, _ := json.Marshal(tt.info)
		fake := filepath.Join(t.TempDir(), "palyra-sidecar")
		if err := os.WriteFile(fake, []byte("#!/bin/sh\ncat <<'EOF'\n"+string(b)+"\nEOF\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := daemon.Open(ctx, daemon.Options{StateDir: state, Config: cfg, SidecarPath: fake})
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
			t.Fatalf("sidecar %+v: %v, want %v saying %q", tt.info.Kernel, err, tt.want, tt.says)
		}
	}
	_, err = daemon.Open(ctx, daemon.Options{StateDir: state, Config: cfg, SidecarPath: sidecar, Cluster: &cluster.Config{URLs: []string{"nats://127.0.0.1:4222"}}})
	if !errors.Is(err, daemon.ErrInvalidConfig) || !strings.Contains(err.Error(), "[cluster.tls]") {
		t.Fatalf("cluster without TLS: %v", err)
	}
	loose := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(loose, []byte("[http]\nallow_private = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = daemon.Open(ctx, daemon.Options{StateDir: state, Config: cfg, SidecarPath: sidecar, PolicyPath: loose})
	if !errors.Is(err, daemon.ErrDeploymentRefused) || !strings.Contains(err.Error(), "allow_private") {
		t.Fatalf("loose profile: %v", err)
	}
	// The state directory's own policy.toml is judged too.
	if err := os.WriteFile(statedir.At(state).Policy(), []byte("[capabilities]\nallow_wildcards = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = daemon.Open(ctx, daemon.Options{StateDir: state, Config: cfg, SidecarPath: sidecar})
	if !errors.Is(err, daemon.ErrDeploymentRefused) || !strings.Contains(err.Error(), "allow_wildcards") {
		t.Fatalf("state dir's loose profile: %v", err)
	}
	if err := os.Remove(statedir.At(state).Policy()); err != nil {
		t.Fatal(err)
	}
	// A trust store with a key pinned on first use: the allowlist only.
	ts := trust.NewStore()
	if _, err := ts.Decide("globex", publisherKey.Public().(ed25519.PublicKey), true); err != nil {
		t.Fatal(err)
	}
	tsPath := filepath.Join(t.TempDir(), "trust-store.json")
	b, err := ts.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tsPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = daemon.Open(ctx, daemon.Options{StateDir: state, Config: cfg, SidecarPath: sidecar, TrustStore: tsPath})
	if !errors.Is(err, daemon.ErrDeploymentRefused) || !strings.Contains(err.Error(), "pinned on first use for globex") {
		t.Fatalf("TOFU pins: %v", err)
	}
	d, err := daemon.Open(ctx, daemon.Options{StateDir: state, SidecarPath: sidecar, TrustStore: tsPath})
	if err != nil {
		t.Fatalf("a local daemon after the refusals: %v", err)
	}
	if got := d.Posture(); got.Deployment != daemon.DeploymentLocal || !got.AllowTOFU || got.StrictEgress {
		t.Errorf("local posture %+v", got)
	}
	if err := d.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestHardenedDaemon serves a hardened daemon over TLS: /readyz and
// /v1/cluster report its posture, a TOFU install is refused with
// deployment_refused (403), an install of a publisher the trust store
// lists succeeds, and a profile loosening egress is refused.
func TestHardenedDaemon(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t, t.TempDir())
	cfg := hardenedConfig(t, certFile, keyFile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	state := t.TempDir()
	pub := publisherKey.Public().(ed25519.PublicKey)
	ts := trust.NewStore()
	if err := ts.AddTrusted("test", hex.EncodeToString(pub)); err != nil {
		t.Fatal(err)
	}
	tsJSON, err := ts.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	layout := statedir.At(state)
	if err := os.MkdirAll(filepath.Dir(layout.TrustStore()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(layout.TrustStore(), tsJSON, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Open(ctx, daemon.Options{StateDir: state, Config: cfg, SidecarPath: filepath.Join(bin, "palyra-sidecar")})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := d.Listen()
	if err != nil {
		d.Close(ctx)
		t.Fatal(err)
	}
	url := d.URL(ln)
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	tok, err := daemon.ReadToken(daemon.TokenPath(state))
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path string, body []byte, out any) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if out != nil {
			if err := json.Unmarshal(b, out); err != nil {
				t.Fatalf("%s %s: %s: %v", method, path, b, err)
			}
		}
		return resp.StatusCode, string(b)
	}

	var ready struct {
		Status  string         `json:"status"`
		Posture daemon.Posture `json:"posture"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if st, _ := do(http.MethodGet, "/readyz", nil, &ready); st == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hardened daemon did not become ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := daemon.Posture{Deployment: daemon.DeploymentHardened, TLS: true, AllowTOFU: false, SidecarHardening: "required", AnomalyQuarantine: true, StrictEgress: true, AllowInline: false}
	if ready.Status != "ready" || ready.Posture != want || d.Posture() != want {
		t.Fatalf("/readyz %+v, Posture() %+v; want %+v", ready, d.Posture(), want)
	}
	var cl struct {
		Node    string         `json:"node"`
		Posture daemon.Posture `json:"posture"`
	}
	if st, b := do(http.MethodGet, "/v1/cluster", nil, &cl); st != http.StatusOK || cl.Posture != want || cl.Node == "" {
		t.Fatalf("/v1/cluster %d %s", st, b)
	}

	art := probeArtifact(t, "test.hardened")
	st, b := do(http.MethodPost, "/v1/skills?allow_tofu=true", art, nil)
	if st != http.StatusForbidden || !strings.Contains(b, `"deployment_refused"`) || !strings.Contains(b, "--trusted-publisher PUBLISHER=KEYHEX") {
		t.Fatalf("TOFU install: %d %s", st, b)
	}
	st, b = do(http.MethodPost, "/v1/skills?trusted_publisher="+fmt.Sprintf("test=%x", pub), art, nil)
	if st != http.StatusForbidden || !strings.Contains(b, `"deployment_refused"`) {
		t.Fatalf("install with its own trusted publisher: %d %s", st, b)
	}
	if st, b = do(http.MethodPost, "/v1/skills", art, nil); st != http.StatusCreated {
		t.Fatalf("install of a listed publisher: %d %s", st, b)
	}
	st, b = do(http.MethodPut, "/v1/policy", []byte("[http]\nallowed_schemes = [\"https\", \"http\"]\n"), nil)
	if st != http.StatusForbidden || !strings.Contains(b, `"deployment_refused"`) {
		t.Fatalf("loosening the profile: %d %s", st, b)
	}
	if st, b = do(http.MethodPut, "/v1/policy", []byte("[http]\nmax_redirects = 2\n"), nil); st != http.StatusOK {
		t.Fatalf("a strict profile: %d %s", st, b)
	}
	st, b = do(http.MethodPut, "/v1/policy", []byte("[dev]\nallow_inline = true\n"), nil)
	if st != http.StatusForbidden || !strings.Contains(b, `"deployment_refused"`) || !strings.Contains(b, "dev.allow_inline") {
		t.Fatalf("a profile allowing inline modules: %d %s", st, b)
	}
	// An inline run is refused by the deployment itself, before the
	// profile is asked.
	inline, _ := json.Marshal(map[string]any{"module": []byte("\x00asm\x01\x00\x00\x00"), "module_name": "m.wasm", "tool_id": "dev.echo", "input": map[string]any{}})
	st, b = do(http.MethodPost, "/v1/dev/run", inline, nil)
	if st != http.StatusForbidden || !strings.Contains(b, `"deployment_refused"`) || !strings.Contains(b, "inline modules") {
		t.Fatalf("an inline run: %d %s", st, b)
	}
	if d.Posture().AllowInline {
		t.Fatal("a hardened posture allows inline modules")
	}
}

// TestLocalReadyzReportsPosture: a local daemon (the real binary) reports
// its posture on /readyz, with the hardening flag it was given.
func TestLocalReadyzReportsPosture(t *testing.T) {
	p := startDaemon(t, t.TempDir(), "", "--no-harden-sidecars")
	defer p.stop()
	resp, err := http.Get(p.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ready struct {
		Status  string         `json:"status"`
		Posture daemon.Posture `json:"posture"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&ready); err != nil {
		t.Fatal(err)
	}
	want := daemon.Posture{Deployment: daemon.DeploymentLocal, AllowTOFU: true, SidecarHardening: "off"}
	if ready.Status != "ready" || ready.Posture != want {
		t.Fatalf("/readyz %+v, want posture %+v", ready, want)
	}

	// Under local, allow_inline follows the profile as it is now.
	req, _ := http.NewRequest(http.MethodPut, p.url+"/v1/policy", strings.NewReader("[dev]\nallow_inline = true\n"))
	req.Header.Set("Authorization", "Bearer "+p.token)
	put, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	put.Body.Close()
	if put.StatusCode != http.StatusOK {
		t.Fatalf("PUT /v1/policy: %d", put.StatusCode)
	}
	resp2, err := http.Get(p.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if err := json.NewDecoder(resp2.Body).Decode(&ready); err != nil {
		t.Fatal(err)
	}
	if want.AllowInline = true; ready.Posture != want {
		t.Fatalf("/readyz after allowing inline modules %+v, want posture %+v", ready.Posture, want)
	}
}

func hardenedConfig(t *testing.T, certFile, keyFile string) *daemon.Config {
	t.Helper()
	cfg, err := daemon.ParseConfig([]byte("deployment = \"hardened\"\nlisten = \"127.0.0.1:0\"\nreaudit_interval = \"0\"\n[tls]\ncert_file = \"" + certFile + "\"\nkey_file = \"" + keyFile + "\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
