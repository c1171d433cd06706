package doctor

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/host/vault"
	"github.com/palyra-go/palyra/internal/buildinfo"
)

// codeStateDirMissing is the code of a state directory that does not
// exist (the commands' state_dir_missing).
const codeStateDirMissing = "state_dir_missing"

// compiler reports the C compiler the sidecar's build needs (cgo for
// wasmtime-go).
func (r *run) compiler(ctx context.Context) Check {
	c := Check{Name: CheckCompiler}
	cc := r.cfg.Compiler
	if cc.Err != nil || cc.Path == "" {
		c.Status, c.Found = StatusWarn, "no C compiler"
		if cc.Err != nil {
			c.Found += ": " + cc.Err.Error()
		}
		c.Fix = "install one (Debian/Ubuntu: apt install gcc; Fedora: dnf install gcc; macOS: xcode-select --install) or set $CC; " +
			"it is needed only to build palyra-sidecar (cgo for wasmtime-go), not to run the binaries"
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cc.Path, "--version")
	out, err := cmd.Output()
	if err != nil {
		c.Status, c.Found = StatusWarn, fmt.Sprintf("%s (from %s) does not run: %v", cc.Path, cc.Source, err)
		c.Fix = "fix or replace the compiler, or point $CC at a working one"
		return c
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	c.Status, c.Found = StatusOK, fmt.Sprintf("%s (from %s): %s", cc.Path, cc.Source, first)
	return c
}

// sidecar finds the sidecar binary and asks it what it is; it must speak
// this program's ABI and protocol, and should be of the same build.
func (r *run) sidecar(ctx context.Context) Check {
	c := Check{Name: CheckSidecar}
	if r.cfg.SidecarErr != nil || r.cfg.Sidecar == "" {
		c.Status, c.Code = StatusFail, errcode.Of(r.cfg.SidecarErr)
		c.Found = "palyra-sidecar not found"
		if r.cfg.SidecarErr != nil {
			c.Found = r.cfg.SidecarErr.Error()
		}
		c.Fix = "build it next to palyra and palyra-host (go build -ldflags=" + buildinfo.SidecarLDFlags + " -o DIR ./cmd/palyra-host ./cmd/palyra-sidecar ./cmd/palyra), or give --sidecar PATH or $PALYRA_SIDECAR"
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	info, err := host.SidecarVersion(ctx, r.cfg.Sidecar)
	if err != nil {
		c.Status, c.Found, c.Code = StatusFail, err.Error(), errcode.Of(err)
		c.Fix = "rebuild palyra-sidecar from the same tree as this palyra (go build -ldflags=" + buildinfo.SidecarLDFlags + " ./cmd/palyra-sidecar)"
		return c
	}
	r.kern = info.Kernel
	self := r.cfg.Self
	desc := fmt.Sprintf("%s: %s, commit %s, wasmtime-go %s, %s, protocol %d", r.cfg.Sidecar, info.Version, info.ShortCommit(), info.WasmtimeGo, info.ABI, info.SidecarProtocol)
	if diff := self.Compatible(*info); diff != "" {
		c.Status, c.Found, c.Code = StatusFail, desc+": does not match this "+self.Program+" ("+diff+")", host.ErrSidecarMismatch.Code()
		c.Fix = "rebuild palyra-sidecar from the same tree as " + self.Program
		return c
	}
	var found, fixes []string
	if buildsDiffer(self, *info) {
		found = append(found, fmt.Sprintf("this %s is %s, commit %s", self.Program, self.Version, self.ShortCommit()))
		fixes = append(fixes, "the ABI and protocol match, but the builds differ: build all three binaries from one tree")
	}
	if info.WasmtimeLinked && info.LinkerGCSections == buildinfo.GCSectionsOff {
		found = append(found, "linked without the linker's --gc-sections")
		fixes = append(fixes, "rebuild it with go build -ldflags="+buildinfo.SidecarLDFlags+" ./cmd/palyra-sidecar: "+
			"it works as it is, but its binary is a third bigger and every idle sidecar maps more of it")
	}
	if len(found) > 0 {
		c.Status, c.Found = StatusWarn, desc+"; "+strings.Join(found, "; ")
		c.Fix = strings.Join(fixes, "; ")
		return c
	}
	c.Status, c.Found = StatusOK, desc
	return c
}

// kernel judges the sidecar's report of the kernel: the hardening
// (seccomp, Landlock, no_new_privs) must apply in full under "hardened".
func (r *run) kernelCheck() Check {
	c := Check{Name: CheckKernel}
	hardened := r.deploymentName() == string(daemon.DeploymentHardened)
	k := r.kern
	if k == nil {
		c.Status, c.Found = StatusWarn, "unknown: the sidecar could not be asked (see the sidecar check)"
		if hardened {
			c.Status = StatusFail
		}
		c.Fix = "fix the sidecar check first"
		return c
	}
	if missing := k.Missing(); len(missing) > 0 {
		c.Status, c.Found = StatusWarn, "the sidecar hardening cannot apply: missing "+strings.Join(missing, "; ")
		c.Fix = "sidecars run with what remains (reported in their state); use a kernel with these for production"
		if hardened {
			c.Status = StatusFail
			c.Fix = "the hardened deployment refuses to start here: " + c.Fix
		}
		return c
	}
	found := fmt.Sprintf("Landlock ABI %d, seccomp filters, no_new_privs", k.LandlockABI)
	if k.LandlockABI < k.LandlockTarget {
		c.Status, c.Found = StatusWarn, found+fmt.Sprintf(": Landlock below ABI %d restricts fewer rights (partial)", k.LandlockTarget)
		c.Fix = "a newer kernel restricts the rest"
		return c
	}
	c.Status, c.Found = StatusOK, found
	return c
}

// sensitiveFiles are the state directory's files that must not be
// writable by others, and whether they must be private (0600).
func sensitiveFiles(l statedir.Layout) []struct {
	path    string
	private bool
} {
	return []struct {
		path    string
		private bool
	}{
		{l.DaemonToken(), true},
		{l.VaultKey(), true},
		{l.VaultFile(), false},
		{l.TrustStore(), false},
		{l.Policy(), false},
		{l.Inventory(), false},
		{l.HookBindings(), false},
	}
}

// stateDir checks that the state directory exists, belongs to this user
// and keeps its secrets to itself.
func (r *run) stateDir() Check {
	c := Check{Name: CheckStateDir}
	dir := r.cfg.StateDir
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Status, c.Code, c.Found = StatusFail, codeStateDirMissing, dir+" does not exist"
		c.Fix = "check --state-dir or $PALYRA_STATE_DIR; palyra-host serve or the first palyra skills install makes it"
		return c
	case err != nil:
		c.Status, c.Found, c.Fix = StatusFail, err.Error(), "make the directory readable by this user"
		return c
	case !fi.IsDir():
		c.Status, c.Found, c.Fix = StatusFail, dir+" is not a directory", "point --state-dir at a directory"
		return c
	}
	var fails, warns []string
	if uid, ok := ownerOf(fi); ok && uid != os.Geteuid() {
		fails = append(fails, fmt.Sprintf("owned by uid %d, this is uid %d", uid, os.Geteuid()))
	}
	if m := fi.Mode().Perm(); m&0o002 != 0 {
		fails = append(fails, fmt.Sprintf("mode %04o: writable by everyone", m))
	} else if m&0o077 != 0 {
		warns = append(warns, fmt.Sprintf("mode %04o: open to group or others", m))
	}
	for _, f := range sensitiveFiles(statedir.At(dir)) {
		fi, err := os.Lstat(f.path)
		if err != nil {
			continue // absent files are the other checks' business
		}
		rel := strings.TrimPrefix(f.path, dir+string(os.PathSeparator))
		m := fi.Mode().Perm()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			fails = append(fails, rel+" is a symbolic link")
		case m&0o022 != 0:
			fails = append(fails, fmt.Sprintf("%s mode %04o: writable by group or others", rel, m))
		case f.private && m&0o077 != 0:
			fails = append(fails, fmt.Sprintf("%s mode %04o: readable by group or others", rel, m))
		}
		if uid, ok := ownerOf(fi); ok && uid != os.Geteuid() {
			fails = append(fails, fmt.Sprintf("%s owned by uid %d", rel, uid))
		}
	}
	switch {
	case len(fails) > 0:
		c.Status, c.Found = StatusFail, dir+": "+strings.Join(append(fails, warns...), "; ")
		c.Fix = fmt.Sprintf("run as the user who owns it (the daemon's), chown -R that user %s, chmod 700 %s and chmod 600 its token and key files", dir, dir)
	case len(warns) > 0:
		c.Status, c.Found = StatusWarn, dir+": "+strings.Join(warns, "; ")
		c.Fix = "chmod 700 " + dir
	default:
		c.Status, c.Found = StatusOK, dir+": owned by this user, mode "+fmt.Sprintf("%04o", fi.Mode().Perm())
	}
	return c
}

// trustStore parses the trust store and counts its publishers and keys.
func (r *run) trustStore(ctx context.Context) Check {
	c := Check{Name: CheckTrustStore}
	path := r.cfg.TrustStore
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		c.Status, c.Found = StatusWarn, path+" does not exist: no publisher is trusted"
		c.Fix = "allowlist your publishers' keys (palyra skills install --trusted-publisher PUBLISHER=KEYHEX adds one to the trust store); installs otherwise need --allow-tofu, which the hardened deployment refuses"
		return c
	}
	var opts []trust.Option
	if v, err := vault.Open(vault.Config{StateDir: r.cfg.StateDir, EncodedKey: r.cfg.VaultKey, KeyCommand: r.cfg.VaultKeyCommand}); err == nil {
		opts = append(opts, trust.WithVault(v))
	}
	f := trust.OpenFile(path, opts...)
	// Review, not Load: the doctor reports and changes nothing (Load would
	// adopt a store without a seal).
	rv, err := f.Review(ctx)
	if err == nil && rv.Status == trust.IntegrityTampered {
		err = &trust.TamperedError{Review: rv}
	}
	if err != nil {
		c.Status, c.Found, c.Code = StatusFail, err.Error(), errcode.Of(err)
		c.Fix = "repair or restore the file (palyra trust show shows what it holds once it parses)"
		if errors.Is(err, trust.ErrTampered) {
			c.Fix = "review what changed with palyra trust accept-changes (it shows the added, removed and changed keys first and re-seals the file only when you confirm), or restore the file from a backup"
		}
		return c
	}
	st := rv.Store()
	pubs := st.Publishers()
	keys := 0
	for _, p := range pubs {
		keys += len(p.TrustedKeys)
		if p.TOFUKey != "" && len(p.TrustedKeys) == 0 {
			r.tofuPins++
		}
	}
	found := fmt.Sprintf("%s: %d publishers, %d allowlisted keys, %d pinned on first use", path, len(pubs), keys, r.tofuPins)
	if rv.Status == trust.IntegrityUnsealed {
		found += "; not sealed yet (from before integrity checks, or written by Palyra): the next load seals it as it is"
	} else {
		found += "; integrity seal intact"
	}
	switch {
	case len(pubs) == 0:
		c.Status, c.Found = StatusWarn, found
		c.Fix = "allowlist your publishers' keys (palyra skills install --trusted-publisher PUBLISHER=KEYHEX adds one to the trust store)"
	case r.tofuPins > 0:
		c.Status, c.Found = StatusWarn, found
		c.Fix = "review the pinned keys (palyra trust show) and allowlist the ones you mean to trust (palyra skills install --trusted-publisher PUBLISHER=KEYHEX); the hardened deployment refuses to start with pins"
	default:
		c.Status, c.Found = StatusOK, found
	}
	return c
}

// denyFeed checks that the installed deny feed, if any, verifies against
// the trust store as it is (read without adopting or changing anything):
// a feed that does not makes every audit fail.
func (r *run) denyFeed(ctx context.Context) Check {
	c := Check{Name: CheckDenyFeed}
	if _, err := os.Stat(r.cfg.StateDir); err != nil {
		c.Status, c.Found = StatusWarn, "not checked: no state directory"
		return c
	}
	path := statedir.At(r.cfg.StateDir).DenyFeed()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		c.Status, c.Found = StatusOK, "no deny feed is installed (palyra feed update FILE installs one): audits check no known-bad module, artifact or publisher key"
		return c
	}
	var opts []trust.Option
	if v, err := vault.Open(vault.Config{StateDir: r.cfg.StateDir, EncodedKey: r.cfg.VaultKey, KeyCommand: r.cfg.VaultKeyCommand}); err == nil {
		opts = append(opts, trust.WithVault(v))
	}
	rv, err := trust.OpenFile(r.cfg.TrustStore, opts...).Review(ctx)
	if err == nil && rv.Status == trust.IntegrityTampered {
		err = &trust.TamperedError{Review: rv}
	}
	if err != nil {
		c.Status, c.Found, c.Code = StatusFail, path+": cannot be verified, the trust store is unusable: "+err.Error(), errcode.Of(err)
		c.Fix = "fix the trust store first (see the trust-store check)"
		return c
	}
	f, err := feed.Load(ctx, path, rv.Store())
	if err != nil {
		c.Status, c.Found, c.Code = StatusFail, err.Error(), errcode.Of(err)
		c.Fix = "install a feed signed by a key the trust store allowlists for its issuer (palyra feed update FILE --trusted-publisher ISSUER=PUBLIC_KEY_HEX); until then every audit fails vulnerability_feed_hook and quarantines what it audits"
		return c
	}
	c.Status = StatusOK
	c.Found = fmt.Sprintf("%s: issuer %s, serial %d (issued %s), %d entries, installed %s by %s; signature verified",
		path, f.Feed.Issuer, f.Feed.Serial, f.Feed.IssuedAt.UTC().Format(time.RFC3339), len(f.Feed.Entries), f.UpdatedAt.UTC().Format(time.RFC3339), f.UpdatedBy)
	return c
}

// vaultKey checks that the vault's key source, as configured, opens the
// vault: with secrets stored, one is opened (its value is dropped at
// once); an empty vault only has its key source checked.
func (r *run) vaultKey(ctx context.Context) Check {
	c := Check{Name: CheckVaultKey}
	src := "the key file " + statedir.At(r.cfg.StateDir).VaultKey()
	switch {
	case r.cfg.VaultKey != "":
		src = "$PALYRA_VAULT_KEY"
	case r.cfg.VaultKeyCommand != "":
		src = "$PALYRA_VAULT_KEY_COMMAND"
	}
	if _, err := os.Stat(r.cfg.StateDir); err != nil {
		c.Status, c.Found = StatusWarn, "not checked: no state directory"
		return c
	}
	v, err := vault.Open(vault.Config{StateDir: r.cfg.StateDir, EncodedKey: r.cfg.VaultKey, KeyCommand: r.cfg.VaultKeyCommand})
	if err != nil {
		c.Status, c.Found, c.Code = StatusFail, err.Error(), errcode.Of(err)
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	entries, err := v.List(ctx)
	if err != nil {
		c.Status, c.Found, c.Code = StatusFail, err.Error(), errcode.Of(err)
		c.Fix = "restore " + v.Path() + " from a backup"
		return c
	}
	if len(entries) == 0 {
		c.Status = StatusOK
		switch {
		case r.cfg.VaultKey != "":
			if err := checkEncodedKey(r.cfg.VaultKey); err != nil {
				c.Status, c.Found, c.Fix = StatusFail, "$PALYRA_VAULT_KEY "+err.Error(), "set it to base64 of 32 random bytes (head -c32 /dev/urandom | base64)"
				return c
			}
			c.Found = "the vault is empty; $PALYRA_VAULT_KEY is a well-formed key"
		case r.cfg.VaultKeyCommand != "":
			c.Found = "the vault is empty; $PALYRA_VAULT_KEY_COMMAND will be run at the first secret (not run now)"
		default:
			if _, err := os.Stat(v.KeyPath()); err == nil {
				c.Found = "the vault is empty; the key file " + v.KeyPath() + " exists"
			} else {
				c.Found = "the vault is empty; the key file is created with the first secret"
			}
		}
		return c
	}
	val, err := v.Get(ctx, entries[0].Name)
	clear(val)
	if err != nil {
		c.Status, c.Found, c.Code = StatusFail, fmt.Sprintf("%d secrets, but %s does not open them: %v", len(entries), src, err), errcode.Of(err)
		c.Fix = "give the key the secrets were sealed with ($PALYRA_VAULT_KEY, $PALYRA_VAULT_KEY_COMMAND or the key file), the same the daemon uses"
		return c
	}
	c.Status, c.Found = StatusOK, fmt.Sprintf("%d secrets; %s opens them", len(entries), src)
	return c
}

// checkEncodedKey checks base64 of vault.KeyBytes bytes, naming only
// lengths.
func checkEncodedKey(s string) error {
	k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	defer clear(k)
	if err != nil {
		return fmt.Errorf("is not valid base64")
	}
	if len(k) != vault.KeyBytes {
		return fmt.Errorf("decodes to %d bytes, want %d", len(k), vault.KeyBytes)
	}
	return nil
}

// posture is the part of the daemon's /readyz document doctor reads.
type posture struct {
	Status  string         `json:"status"`
	Posture daemon.Posture `json:"posture"`
}

// daemon checks that the configured daemon, else the one the state
// directory's daemon.json names, answers and accepts the token.
func (r *run) daemon(ctx context.Context) Check {
	c := Check{Name: CheckDaemon}
	url, src := r.cfg.DaemonURL, r.cfg.DaemonURLSource
	if url == "" {
		info, err := daemon.ReadInfo(r.cfg.StateDir)
		if err != nil {
			c.Status, c.Found = StatusWarn, "no daemon configured (--url, $PALYRA_DAEMON_URL) and none running on "+r.cfg.StateDir
			c.Fix = "start one with palyra-host serve --state-dir " + r.cfg.StateDir + " (the CLI works on the state directory without it)"
			return c
		}
		url, src = info.URL, fmt.Sprintf("%s (pid %d)", daemon.InfoPath(r.cfg.StateDir), info.PID)
	}
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(url, "/")+"/readyz", nil)
	if err != nil {
		c.Status, c.Found, c.Fix = StatusFail, fmt.Sprintf("%s from %s: %v", url, src, err), "give an http(s) URL"
		return c
	}
	resp, err := r.cfg.HTTPClient.Do(req)
	if err != nil {
		c.Status, c.Found, c.Code = StatusFail, fmt.Sprintf("%s from %s does not answer: %v", url, src, err), client.ErrTransport.Code()
		c.Fix = "start palyra-host serve, or correct the URL; a daemon.json left by a crashed daemon goes away at the next start"
		var certErr *tls.CertificateVerificationError
		if errors.As(err, &certErr) {
			c.Fix = "its certificate is not trusted here: add its CA to the system's roots or point $SSL_CERT_FILE at it"
		}
		return c
	}
	var p posture
	err = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&p)
	resp.Body.Close()
	if err != nil || p.Status == "" {
		c.Status, c.Found = StatusFail, fmt.Sprintf("%s from %s answers /readyz with %s, not a palyra-host document", url, src, resp.Status)
		c.Fix = "check that the URL is palyra-host's"
		return c
	}
	if p.Status != "ready" {
		c.Status, c.Found = StatusWarn, fmt.Sprintf("%s from %s is %s", url, src, p.Status)
		c.Fix = "it is starting or stopping: run doctor again in a moment"
		return c
	}
	r.posture = &p
	tok := r.cfg.DaemonToken
	if tok == "" {
		tok, _ = daemon.ReadToken(daemon.TokenPath(r.cfg.StateDir))
	}
	cl, err := client.New(url, tok, client.WithHTTPClient(r.cfg.HTTPClient))
	if err == nil {
		_, err = cl.Cluster(ctx)
	}
	if err != nil {
		c.Status, c.Found, c.Code = StatusFail, fmt.Sprintf("%s from %s is ready but refuses this client: %v", url, src, err), errcode.Of(err)
		c.Fix = "give its admin token with --token or $PALYRA_ADMIN_TOKEN (palyra-host token path prints the file)"
		return c
	}
	c.Status, c.Found = StatusOK, fmt.Sprintf("%s from %s: ready, token accepted, deployment %s", url, src, p.Posture.Deployment)
	return c
}

// deploymentName is the deployment doctor judges by: the one given, else
// the running daemon's, else the configuration file's, else local.
func (r *run) deploymentName() string {
	switch {
	case r.cfg.Deployment != "":
		return r.cfg.Deployment
	case r.posture != nil:
		return string(r.posture.Posture.Deployment)
	}
	if r.cfg.DaemonConfig != "" {
		if cfg, err := daemon.LoadConfig(r.cfg.DaemonConfig); err == nil {
			return string(cfg.Deployment)
		}
	}
	return string(daemon.DeploymentLocal)
}

// deployment reports the posture, and under "hardened" what would stop
// the daemon from starting.
func (r *run) deployment() Check {
	c := Check{Name: CheckDeployment}
	var from string
	var p daemon.Posture
	switch {
	case r.cfg.Deployment != "" || r.posture == nil:
		cfg := &daemon.Config{}
		from = "the default"
		if r.cfg.DaemonConfig != "" {
			var err error
			if cfg, err = daemon.LoadConfig(r.cfg.DaemonConfig); err != nil {
				c.Status, c.Found, c.Code = StatusFail, err.Error(), errcode.Of(err)
				c.Fix = "fix the configuration: palyra-host serve refuses it"
				return c
			}
			from = r.cfg.DaemonConfig
		}
		if r.cfg.Deployment != "" {
			cfg.Deployment, from = daemon.Deployment(r.cfg.Deployment), "--deployment"
		}
		if err := cfg.Validate(); err != nil {
			c.Status, c.Found, c.Code = StatusFail, err.Error(), errcode.Of(err)
			c.Fix = "palyra-host serve would refuse this: fix what it names"
			return c
		}
		p = cfg.Posture(false)
	default:
		p, from = r.posture.Posture, "the running daemon"
	}
	found := fmt.Sprintf("%s (from %s): %s", p.Deployment, from, describePosture(p))
	if p.Deployment != daemon.DeploymentHardened {
		c.Status, c.Found = StatusOK, found
		c.Fix = "for production: palyra-host serve --deployment hardened (with [tls])"
		return c
	}
	var problems []string
	if r.kern != nil {
		if missing := r.kern.Missing(); len(missing) > 0 {
			problems = append(problems, "the kernel lacks "+strings.Join(missing, "; "))
		}
	}
	if prof, err := daemon.LoadProfile(r.cfg.PolicyPath, r.cfg.StateDir); err != nil {
		problems = append(problems, "the operator profile: "+err.Error())
	} else if err := daemon.StrictEgress(prof); err != nil {
		problems = append(problems, err.Error())
	}
	if r.tofuPins > 0 {
		problems = append(problems, fmt.Sprintf("the trust store holds %d keys pinned on first use (the hardened daemon trusts the allowlist only)", r.tofuPins))
	}
	if len(problems) > 0 {
		c.Status, c.Found = StatusFail, found+"; but "+strings.Join(problems, "; ")
		c.Fix = "the hardened daemon refuses to start (or to change its profile) until these are fixed"
		return c
	}
	c.Status, c.Found = StatusOK, found
	return c
}

// describePosture is the posture in words.
func describePosture(p daemon.Posture) string {
	var parts []string
	add := func(on bool, yes, no string) {
		if on {
			parts = append(parts, yes)
		} else if no != "" {
			parts = append(parts, no)
		}
	}
	add(p.TLS, "TLS", "no TLS (loopback only)")
	add(p.AllowTOFU, "TOFU on request", "trust store allowlist only")
	parts = append(parts, "sidecar hardening "+p.SidecarHardening)
	add(p.AnomalyQuarantine, "anomaly quarantine", "no anomaly quarantine")
	add(p.StrictEgress, "strict egress", "")
	add(p.AllowInline, "inline modules allowed", "no inline modules")
	return strings.Join(parts, ", ")
}

// buildsDiffer reports whether two binaries were built from different
// trees, as far as their stamps tell: their commits when both have one,
// else their versions when neither is a development build. An unstamped
// build (a test binary, go build with -buildvcs=false) tells nothing.
func buildsDiffer(a, b buildinfo.Info) bool {
	if a.Commit != buildinfo.Unknown && b.Commit != buildinfo.Unknown {
		return a.Commit != b.Commit
	}
	if a.Version == buildinfo.Devel || b.Version == buildinfo.Devel {
		return false
	}
	return a.Version != b.Version
}
