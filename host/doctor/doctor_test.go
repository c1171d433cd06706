package doctor_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/doctor"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/host/vault"
	"github.com/palyra-go/palyra/internal/buildinfo"
	"github.com/palyra-go/palyra/internal/testtls"
)

// baseConfig is a configuration whose every check can pass: the real
// sidecar, a fake compiler, a fresh state directory (mode 0700) with no
// daemon.
func baseConfig(t *testing.T) doctor.Config {
	t.Helper()
	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	cc := writeScript(t, "cc", "#!/bin/sh\necho 'fakecc 1.2.3'\necho 'second line'\n")
	return doctor.Config{
		Self: buildinfo.Get("palyra"), StateDir: state, TrustStore: statedir.At(state).TrustStore(),
		Compiler: doctor.Compiler{Path: cc, Source: "$CC"}, Sidecar: filepath.Join(bin, "palyra-sidecar"),
	}
}

func writeScript(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// check runs doctor and returns the named check, after checking that
// the report holds the eight checks in order and that OK agrees with
// them.
func check(t *testing.T, cfg doctor.Config, name string) doctor.Check {
	t.Helper()
	rep := doctor.Run(context.Background(), cfg)
	names := []string{doctor.CheckCompiler, doctor.CheckSidecar, doctor.CheckKernel, doctor.CheckStateDir, doctor.CheckTrustStore, doctor.CheckVaultKey, doctor.CheckDaemon, doctor.CheckDeployment, doctor.CheckDenyFeed}
	if len(rep.Checks) != len(names) {
		t.Fatalf("%d checks, want %d", len(rep.Checks), len(names))
	}
	failed := false
	var found *doctor.Check
	for i, c := range rep.Checks {
		if c.Name != names[i] {
			t.Fatalf("check %d is %s, want %s", i, c.Name, names[i])
		}
		failed = failed || c.Status == doctor.StatusFail
		if c.Name == name {
			found = &rep.Checks[i]
		}
	}
	if rep.OK == failed {
		t.Fatalf("OK %t with a failed check %t", rep.OK, failed)
	}
	return *found
}

// want asserts a check's status and that its text names each of subs.
func want(t *testing.T, c doctor.Check, status doctor.Status, subs ...string) {
	t.Helper()
	if c.Status != status {
		t.Fatalf("%s: %s (%s — %s), want %s", c.Name, c.Status, c.Found, c.Fix, status)
	}
	all := c.Found + " — " + c.Fix + " [" + c.Code + "]"
	for _, s := range subs {
		if !strings.Contains(all, s) {
			t.Errorf("%s: %q does not name %q", c.Name, all, s)
		}
	}
}

func TestCompiler(t *testing.T) {
	cfg := baseConfig(t)
	want(t, check(t, cfg, doctor.CheckCompiler), doctor.StatusOK, "fakecc 1.2.3", "$CC")
	cfg.Compiler = doctor.Compiler{Source: "$PATH", Err: errors.New("none of cc, gcc, clang is in $PATH")}
	want(t, check(t, cfg, doctor.CheckCompiler), doctor.StatusWarn, "none of cc", "apt install gcc", "palyra-sidecar")
	cfg.Compiler = doctor.Compiler{Path: writeScript(t, "cc", "#!/bin/sh\nexit 3\n"), Source: "$CC"}
	want(t, check(t, cfg, doctor.CheckCompiler), doctor.StatusWarn, "does not run")
}

func TestSidecar(t *testing.T) {
	cfg := baseConfig(t)
	want(t, check(t, cfg, doctor.CheckSidecar), doctor.StatusOK, cfg.Sidecar, "palyra.skills.abi.v1")

	side := buildinfo.Get("palyra-sidecar")
	side.Kernel = &buildinfo.KernelSupport{Linux: true, LandlockABI: 7, LandlockTarget: 7, Seccomp: true, NoNewPrivs: true}
	script := func(in buildinfo.Info) string {
		b, _ := json.Marshal(in)
		return writeScript(t, "palyra-sidecar", "#!/bin/sh\ncat <<'EOF'\n"+string(b)+"\nEOF\n")
	}
	// A sidecar stamped by another build than a stamped palyra: a warning.
	self := cfg.Self
	cfg.Self.Version, cfg.Self.Commit = "v1.0.0", "aaaaaaaaaaaa"
	other := side
	other.Version, other.Commit = "v9.9.9", "bbbbbbbbbbbb"
	cfg.Sidecar = script(other)
	want(t, check(t, cfg, doctor.CheckSidecar), doctor.StatusWarn, "v9.9.9", "build all three binaries from one tree")
	// Beside an unstamped palyra (go test, -buildvcs=false) nothing can be
	// compared: ok.
	cfg.Self = self
	cfg.Self.Version, cfg.Self.Commit = buildinfo.Devel, buildinfo.Unknown
	want(t, check(t, cfg, doctor.CheckSidecar), doctor.StatusOK, "v9.9.9")
	cfg.Self = self

	// A sidecar linked without --gc-sections works, with a warning; one
	// that does not record its linker flags (-trimpath) is not judged.
	linked := side
	linked.WasmtimeLinked, linked.LinkerGCSections = true, buildinfo.GCSectionsOff
	cfg.Sidecar = script(linked)
	want(t, check(t, cfg, doctor.CheckSidecar), doctor.StatusWarn, "without the linker's --gc-sections", "-ldflags="+buildinfo.SidecarLDFlags, "a third bigger")
	for _, gc := range []string{buildinfo.GCSectionsOn, ""} {
		linked.LinkerGCSections = gc
		cfg.Sidecar = script(linked)
		want(t, check(t, cfg, doctor.CheckSidecar), doctor.StatusOK)
	}

	abi := side
	abi.ABI = "palyra.skills.abi.v2"
	cfg.Sidecar = script(abi)
	want(t, check(t, cfg, doctor.CheckSidecar), doctor.StatusFail, "abi palyra.skills.abi.v2, want palyra.skills.abi.v1", "sidecar_mismatch")

	cfg.Sidecar = writeScript(t, "palyra-sidecar", "#!/bin/sh\necho 'palyra-sidecar: unknown command \"version\"' >&2\nexit 2\n")
	want(t, check(t, cfg, doctor.CheckSidecar), doctor.StatusFail, "unknown command", "rebuild palyra-sidecar", "sidecar_mismatch")
	// Without a sidecar, the kernel is unknown.
	want(t, check(t, cfg, doctor.CheckKernel), doctor.StatusWarn, "could not be asked")

	cfg.Sidecar, cfg.SidecarErr = "", errors.New("sidecar_not_found: no palyra-sidecar next to palyra")
	want(t, check(t, cfg, doctor.CheckSidecar), doctor.StatusFail, "no palyra-sidecar next to palyra", "--sidecar PATH")
}

// TestKernel judges the kernel as a sidecar reports it: missing pieces
// are a warning under local and a failure under hardened.
func TestKernel(t *testing.T) {
	cfg := baseConfig(t)
	side := buildinfo.Get("palyra-sidecar")
	for _, tt := range []struct {
		name       string
		k          buildinfo.KernelSupport
		deployment string
		status     doctor.Status
		subs       []string
	}{
		{"full", buildinfo.KernelSupport{Linux: true, LandlockABI: 7, LandlockTarget: 7, Seccomp: true, NoNewPrivs: true}, "", doctor.StatusOK, []string{"Landlock ABI 7"}},
		{"partial landlock", buildinfo.KernelSupport{Linux: true, LandlockABI: 4, LandlockTarget: 7, Seccomp: true, NoNewPrivs: true}, "", doctor.StatusWarn, []string{"below ABI 7", "partial"}},
		{"no landlock, local", buildinfo.KernelSupport{Linux: true, Seccomp: true, NoNewPrivs: true, LandlockTarget: 7}, "local", doctor.StatusWarn, []string{"CONFIG_SECURITY_LANDLOCK"}},
		{"no landlock, hardened", buildinfo.KernelSupport{Linux: true, Seccomp: true, NoNewPrivs: true, LandlockTarget: 7}, "hardened", doctor.StatusFail, []string{"CONFIG_SECURITY_LANDLOCK", "refuses to start"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := side
			k := tt.k
			in.Kernel = &k
			b, _ := json.Marshal(in)
			c := cfg
			c.Sidecar = writeScript(t, "palyra-sidecar", "#!/bin/sh\ncat <<'EOF'\n"+string(b)+"\nEOF\n")
			c.Deployment = tt.deployment
			want(t, check(t, c, doctor.CheckKernel), tt.status, tt.subs...)
		})
	}
}

func TestStateDir(t *testing.T) {
	cfg := baseConfig(t)
	want(t, check(t, cfg, doctor.CheckStateDir), doctor.StatusOK, "mode 0700")

	missing := cfg
	missing.StateDir = filepath.Join(t.TempDir(), "typo")
	c := check(t, missing, doctor.CheckStateDir)
	want(t, c, doctor.StatusFail, "does not exist", "--state-dir")
	if c.Code != "state_dir_missing" {
		t.Errorf("code %q, want state_dir_missing", c.Code)
	}
	if _, err := os.Stat(missing.StateDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("doctor created the missing state directory: %v", err)
	}

	file := cfg
	file.StateDir = writeScript(t, "notadir", "")
	want(t, check(t, file, doctor.CheckStateDir), doctor.StatusFail, "is not a directory")

	if err := os.Chmod(cfg.StateDir, 0o750); err != nil {
		t.Fatal(err)
	}
	want(t, check(t, cfg, doctor.CheckStateDir), doctor.StatusWarn, "mode 0750", "chmod 700")
	if err := os.Chmod(cfg.StateDir, 0o777); err != nil {
		t.Fatal(err)
	}
	want(t, check(t, cfg, doctor.CheckStateDir), doctor.StatusFail, "writable by everyone")
	if err := os.Chmod(cfg.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}

	l := statedir.At(cfg.StateDir)
	if err := os.MkdirAll(l.DaemonDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.DaemonToken(), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	want(t, check(t, cfg, doctor.CheckStateDir), doctor.StatusFail, "daemon/admin-token mode 0644: readable by group or others", "chmod 600")
	if err := os.Chmod(l.DaemonToken(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Policy(), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(l.Policy(), 0o666); err != nil { // past the umask
		t.Fatal(err)
	}
	want(t, check(t, cfg, doctor.CheckStateDir), doctor.StatusFail, "policy.toml mode 0666: writable by group or others")
}

func TestTrustStore(t *testing.T) {
	cfg := baseConfig(t)
	want(t, check(t, cfg, doctor.CheckTrustStore), doctor.StatusWarn, "does not exist", "--trusted-publisher PUBLISHER=KEYHEX")

	if err := os.MkdirAll(filepath.Dir(cfg.TrustStore), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.TrustStore, []byte(`{"trusted_publishers": {"acme": ["not hex"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := check(t, cfg, doctor.CheckTrustStore)
	want(t, c, doctor.StatusFail, "repair or restore")

	key := hex.EncodeToString(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)).Public().(ed25519.PublicKey))
	st := trust.NewStore()
	if err := st.AddTrusted("acme", key); err != nil {
		t.Fatal(err)
	}
	writeStore(t, cfg.TrustStore, st)
	want(t, check(t, cfg, doctor.CheckTrustStore), doctor.StatusOK, "1 publishers, 1 allowlisted keys, 0 pinned on first use")

	// A key pinned on first use is a warning, and under hardened the
	// deployment check says so too.
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, 32)).Public().(ed25519.PublicKey)
	if _, err := st.Decide("globex", other, true); err != nil {
		t.Fatal(err)
	}
	writeStore(t, cfg.TrustStore, st)
	want(t, check(t, cfg, doctor.CheckTrustStore), doctor.StatusWarn, "2 publishers, 1 allowlisted keys, 1 pinned on first use", "palyra trust show")
	conf := filepath.Join(t.TempDir(), "palyra-host.toml")
	if err := os.WriteFile(conf, []byte("deployment = \"hardened\"\n[tls]\ncert_file = \"c.pem\"\nkey_file = \"k.pem\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.DaemonConfig = conf
	want(t, check(t, cfg, doctor.CheckDeployment), doctor.StatusFail, "1 keys pinned on first use", "allowlist only")
}

// TestTrustStoreTampered: a store sealed with the vault key and then edited
// by hand fails the check with trust_store_tampered and points at
// accept-changes; the doctor itself writes nothing.
func TestTrustStoreTampered(t *testing.T) {
	ctx := context.Background()
	cfg := baseConfig(t)
	cfg.VaultKey = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
	v, err := vault.Open(vault.Config{StateDir: cfg.StateDir, EncodedKey: cfg.VaultKey})
	if err != nil {
		t.Fatal(err)
	}
	f := trust.OpenFile(cfg.TrustStore, trust.WithVault(v))
	key := hex.EncodeToString(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)).Public().(ed25519.PublicKey))
	if err := f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", key) }); err != nil {
		t.Fatal(err)
	}
	want(t, check(t, cfg, doctor.CheckTrustStore), doctor.StatusOK, "1 publishers", "integrity seal intact")

	st, err := f.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evil := hex.EncodeToString(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)).Public().(ed25519.PublicKey))
	if err := st.AddTrusted("evil", evil); err != nil {
		t.Fatal(err)
	}
	writeStore(t, cfg.TrustStore, st)
	seal := f.SealPath()
	before, err := os.ReadFile(seal)
	if err != nil {
		t.Fatal(err)
	}
	c := check(t, cfg, doctor.CheckTrustStore)
	want(t, c, doctor.StatusFail, "trust_store_tampered", cfg.TrustStore, "1 keys added", "palyra trust accept-changes")
	if c.Code != "trust_store_tampered" {
		t.Fatalf("code %q", c.Code)
	}
	if after, _ := os.ReadFile(seal); !bytes.Equal(before, after) {
		t.Fatal("the doctor changed the seal")
	}
	// Without the vault key the seal cannot be verified: fail closed.
	cfg.VaultKey = ""
	want(t, check(t, cfg, doctor.CheckTrustStore), doctor.StatusFail, "trust_store_tampered", "vault key")
}

func writeStore(t *testing.T, path string, st *trust.Store) {
	t.Helper()
	b, err := st.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestVaultKey(t *testing.T) {
	cfg := baseConfig(t)
	want(t, check(t, cfg, doctor.CheckVaultKey), doctor.StatusOK, "the vault is empty", "created with the first secret")

	keyA := bytes.Repeat([]byte{0xa}, vault.KeyBytes)
	keyB := bytes.Repeat([]byte{0xb}, vault.KeyBytes)
	bad := cfg
	bad.VaultKey = base64.StdEncoding.EncodeToString(keyA[:16])
	want(t, check(t, bad, doctor.CheckVaultKey), doctor.StatusFail, "decodes to 16 bytes, want 32")
	bad.VaultKey = "!!"
	want(t, check(t, bad, doctor.CheckVaultKey), doctor.StatusFail, "not valid base64")
	good := cfg
	good.VaultKey = base64.StdEncoding.EncodeToString(keyA)
	want(t, check(t, good, doctor.CheckVaultKey), doctor.StatusOK, "well-formed key")

	v, err := vault.Open(vault.Config{StateDir: cfg.StateDir, Key: keyA})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Set(context.Background(), vault.MustParseName("skill:acme.echo/token"), []byte("s3cret-value")); err != nil {
		t.Fatal(err)
	}
	want(t, check(t, good, doctor.CheckVaultKey), doctor.StatusOK, "1 secrets; $PALYRA_VAULT_KEY opens them")
	wrong := cfg
	wrong.VaultKey = base64.StdEncoding.EncodeToString(keyB)
	c := check(t, wrong, doctor.CheckVaultKey)
	want(t, c, doctor.StatusFail, "1 secrets, but $PALYRA_VAULT_KEY does not open them", "the same the daemon uses")
	none := check(t, cfg, doctor.CheckVaultKey)
	want(t, none, doctor.StatusFail, "the key file")
	for _, c := range []doctor.Check{c, none} {
		if strings.Contains(c.Found, "s3cret") {
			t.Fatalf("a secret value leaked into the report: %s", c.Found)
		}
	}
}

// TestDaemonAndDeployment serves a real daemon on the state directory:
// doctor finds it through daemon.json, reads its posture, and fails on a
// wrong token; a URL that does not answer fails; a hardened posture is
// judged against the operator profile.
func TestDaemonAndDeployment(t *testing.T) {
	cfg := baseConfig(t)
	want(t, check(t, cfg, doctor.CheckDaemon), doctor.StatusWarn, "no daemon configured", "palyra-host serve --state-dir")
	want(t, check(t, cfg, doctor.CheckDeployment), doctor.StatusOK, "local (from the default)", "--deployment hardened")

	// A hardened daemon over TLS.
	ca := testtls.NewCA(t)
	certFile, keyFile, err := ca.WriteLeaf(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(t.TempDir(), "palyra-host.toml")
	conf := "deployment = \"hardened\"\nlisten = \"127.0.0.1:0\"\nreaudit_interval = \"0\"\n[tls]\ncert_file = \"" + certFile + "\"\nkey_file = \"" + keyFile + "\"\n"
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	// Before it runs, doctor judges the configuration file.
	cfg.DaemonConfig = confPath
	want(t, check(t, cfg, doctor.CheckDeployment), doctor.StatusOK, "hardened (from "+confPath+")", "trust store allowlist only", "strict egress")
	noTLS := cfg
	noTLS.DaemonConfig, noTLS.Deployment = "", "hardened"
	want(t, check(t, noTLS, doctor.CheckDeployment), doctor.StatusFail, "requires TLS", "daemon_config_invalid")

	dcfg, err := daemon.LoadConfig(confPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d, err := daemon.Open(ctx, daemon.Options{StateDir: cfg.StateDir, Config: dcfg, SidecarPath: cfg.Sidecar})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := d.Listen()
	if err != nil {
		cancel()
		d.Close(ctx)
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}
	defer tr.CloseIdleConnections()
	cfg.HTTPClient = &http.Client{Transport: tr, Timeout: doctor.CheckTimeout}
	cfg.DaemonConfig = ""
	// Serve writes daemon.json, then turns ready: wait for both.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c := check(t, cfg, doctor.CheckDaemon); c.Status == doctor.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon did not become ready")
		}
	}
	want(t, check(t, cfg, doctor.CheckDaemon), doctor.StatusOK, "daemon.json", "token accepted", "deployment hardened")
	want(t, check(t, cfg, doctor.CheckDeployment), doctor.StatusOK, "hardened (from the running daemon)", "sidecar hardening required", "anomaly quarantine")

	untrusted := cfg
	untrusted.HTTPClient = nil // the system's roots do not hold the test CA
	want(t, check(t, untrusted, doctor.CheckDaemon), doctor.StatusFail, "does not answer", "certificate is not trusted here")

	wrongToken := cfg
	wrongToken.DaemonToken = strings.Repeat("0", 64)
	want(t, check(t, wrongToken, doctor.CheckDaemon), doctor.StatusFail, "refuses this client", "--token")

	// A profile loosened behind the daemon's back: the next start fails.
	if err := os.WriteFile(statedir.At(cfg.StateDir).Policy(), []byte("[http]\nallow_private = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want(t, check(t, cfg, doctor.CheckDeployment), doctor.StatusFail, "allow_private", "refuses to start")

	// Nothing listens at a closed port.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	gone := cfg
	gone.DaemonURL, gone.DaemonURLSource = dead, "--url"
	want(t, check(t, gone, doctor.CheckDaemon), doctor.StatusFail, dead+" from --url does not answer", "daemon_unreachable")
}

func TestReportOutputs(t *testing.T) {
	cfg := baseConfig(t)
	cfg.StateDir = filepath.Join(t.TempDir(), "typo")
	rep := doctor.Run(context.Background(), cfg)
	if rep.OK {
		t.Fatal("a missing state directory is a failure")
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	if len(lines) != 11 || !strings.HasPrefix(lines[10], "9 checks: ") {
		t.Fatalf("text report:\n%s", text.String())
	}
	var stateLine string
	for _, l := range lines[:8] {
		f := strings.Fields(l)
		if len(f) < 3 || (f[0] != "ok" && f[0] != "warn" && f[0] != "fail") {
			t.Fatalf("line %q is not `status name found`", l)
		}
		if f[1] == doctor.CheckStateDir {
			stateLine = l
		}
	}
	if !strings.HasPrefix(stateLine, "fail  state-dir ") || !strings.Contains(stateLine, "does not exist [state_dir_missing] — check --state-dir") {
		t.Errorf("state-dir line %q", stateLine)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back doctor.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.OK || len(back.Checks) != 9 || back.Counts[doctor.StatusFail] != rep.Counts[doctor.StatusFail] || back.Checks[3].Code != "state_dir_missing" {
		t.Fatalf("JSON report %s", js.String())
	}
}

// TestDenyFeed: no feed is ok and says so; a feed signed by a key the
// trust store allowlists for its issuer is ok with its issuer, serial and
// entries; the same feed once the store no longer allowlists the key fails
// with untrusted_deny_feed and says what to do; a corrupt file fails with
// invalid_deny_feed. The doctor changes nothing.
func TestDenyFeed(t *testing.T) {
	ctx := context.Background()
	cfg := baseConfig(t)
	want(t, check(t, cfg, doctor.CheckDenyFeed), doctor.StatusOK, "no deny feed is installed", "palyra feed update")

	issuer := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, 32))
	issuerHex := hex.EncodeToString(issuer.Public().(ed25519.PublicKey))
	f := trust.OpenFile(cfg.TrustStore)
	if err := f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme-security", issuerHex) }); err != nil {
		t.Fatal(err)
	}
	data, err := feed.Sign(feed.Feed{SchemaVersion: 1, Issuer: "acme-security", Serial: 4, IssuedAt: time.Unix(1_760_000_000, 0), Entries: []feed.Entry{
		{Kind: feed.KindModuleSHA256, Value: strings.Repeat("ab", 32), Reason: "bad"},
	}}, issuer)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	path := statedir.At(cfg.StateDir).DenyFeed()
	if _, err := feed.Update(ctx, path, data, s, "user:ops", time.Unix(1_760_000_100, 0)); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want(t, check(t, cfg, doctor.CheckDenyFeed), doctor.StatusOK, "issuer acme-security", "serial 4", "1 entries", "by user:ops", "signature verified")

	// A trust store that allowlists another key for the issuer.
	other := hex.EncodeToString(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{5}, 32)).Public().(ed25519.PublicKey))
	cfg.TrustStore = filepath.Join(t.TempDir(), "other-trust-store.json")
	if err := trust.OpenFile(cfg.TrustStore).Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme-security", other) }); err != nil {
		t.Fatal(err)
	}
	c := check(t, cfg, doctor.CheckDenyFeed)
	want(t, c, doctor.StatusFail, "acme-security")
	if c.Code != "untrusted_deny_feed" || !strings.Contains(c.Fix, "palyra feed update") {
		t.Fatalf("untrusted feed: %+v", c)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the doctor changed the feed")
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c := check(t, cfg, doctor.CheckDenyFeed); c.Status != doctor.StatusFail || c.Code != "invalid_deny_feed" {
		t.Fatalf("corrupt feed: %+v", c)
	}
}
