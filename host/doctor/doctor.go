package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/palyra-go/palyra/internal/buildinfo"
)

// Status is a check's outcome.
type Status string

// The outcomes, from best to worst.
const (
	StatusOK   Status = "ok"
	StatusWarn Status = "warn"
	StatusFail Status = "fail"
)

// Names of the checks, in the order Run reports them.
const (
	CheckCompiler   = "c-compiler"
	CheckSidecar    = "sidecar"
	CheckKernel     = "kernel-hardening"
	CheckStateDir   = "state-dir"
	CheckTrustStore = "trust-store"
	CheckVaultKey   = "vault-key"
	CheckDaemon     = "daemon"
	CheckDeployment = "deployment"
	CheckDenyFeed   = "deny-feed"
)

// CheckTimeout bounds each check that runs a program or asks the daemon.
const CheckTimeout = 10 * time.Second

// Check is one line of the report.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Found says what the check found.
	Found string `json:"found"`
	// Fix says what to do; "" when there is nothing to do.
	Fix string `json:"fix,omitempty"`
	// Code is the error code of the condition when it has one
	// (state_dir_missing, sidecar_mismatch, unauthorized...).
	Code string `json:"code,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	Checks []Check `json:"checks"`
	// OK is false when any check failed.
	OK bool `json:"ok"`
	// Counts are the number of checks by status.
	Counts map[Status]int `json:"counts"`
}

// Compiler is the C compiler the command found: Path and where it came
// from (Source: "$CC", "$PATH"), or Err.
type Compiler struct {
	Path, Source string
	Err          error
}

// Config is what Run checks, resolved by the command.
type Config struct {
	// Self is the build information of the program running the checks;
	// the sidecar must match it.
	Self buildinfo.Info
	// StateDir is the absolute state directory.
	StateDir string
	// TrustStore is the trust store file.
	TrustStore string
	// VaultKey and VaultKeyCommand are the vault key sources
	// (vault.Config.EncodedKey and KeyCommand); both "" is the key file.
	VaultKey, VaultKeyCommand string
	// Compiler is the C compiler.
	Compiler Compiler
	// Sidecar is the palyra-sidecar binary, or SidecarErr why none was
	// found.
	Sidecar    string
	SidecarErr error
	// DaemonURL is the daemon to check ("": the one daemon.json of the
	// state directory names, if any), DaemonURLSource where it came from
	// (--url, $PALYRA_DAEMON_URL), DaemonToken its admin token ("": the
	// state directory's token file when readable).
	DaemonURL, DaemonURLSource, DaemonToken string
	// DaemonConfig is palyra-host's configuration file, for the
	// deployment profile when no daemon answers ("": none).
	DaemonConfig string
	// Deployment, when set, is the deployment to check against (the
	// --deployment the daemon is or will be started with); it wins over
	// the running daemon's and DaemonConfig's.
	Deployment string
	// PolicyPath is the operator profile ("": <state>/policy.toml, else
	// the default profile).
	PolicyPath string
	// HTTPClient asks the daemon (nil: a client with CheckTimeout).
	HTTPClient *http.Client
}

// Run runs every check and returns the report. It never stops early: a
// failed check is a line of the report.
func Run(ctx context.Context, cfg Config) *Report {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: CheckTimeout}
	}
	r := &run{cfg: cfg}
	compiler := r.compiler(ctx)
	sidecar := r.sidecar(ctx)
	state := r.stateDir()
	trustC := r.trustStore(ctx)
	vaultC := r.vaultKey(ctx)
	daemonC := r.daemon(ctx)
	// The kernel and deployment checks judge by the deployment, which
	// the daemon check may have learnt.
	deployment := r.deployment()
	kernel := r.kernelCheck()
	feedC := r.denyFeed(ctx)
	rep := &Report{Checks: []Check{compiler, sidecar, kernel, state, trustC, vaultC, daemonC, deployment, feedC}, OK: true, Counts: map[Status]int{}}
	for _, c := range rep.Checks {
		rep.Counts[c.Status]++
		if c.Status == StatusFail {
			rep.OK = false
		}
	}
	return rep
}

// WriteText writes one aligned line per check, "status  name  found —
// fix", and a summary line.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range r.Checks {
		line := c.Found
		if c.Code != "" {
			line += " [" + c.Code + "]"
		}
		if c.Fix != "" {
			line += " — " + c.Fix
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Status, c.Name, oneLine(line))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d checks: %d ok, %d warn, %d fail\n", len(r.Checks), r.Counts[StatusOK], r.Counts[StatusWarn], r.Counts[StatusFail])
	return err
}

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// oneLine keeps a message on its line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\t", " ")), " ")
}

// run carries what one check tells the later ones.
type run struct {
	cfg Config
	// kern is the sidecar's report of the kernel (nil when the sidecar
	// could not be asked).
	kern *buildinfo.KernelSupport
	// posture is the running daemon's readiness document, when one
	// answered.
	posture *posture
	// tofuPins counts the trust store's keys pinned on first use.
	tofuPins int
}
