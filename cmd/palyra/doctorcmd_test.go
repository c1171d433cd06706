package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/doctor"
	"github.com/palyra-go/palyra/internal/buildinfo"
	"github.com/palyra-go/palyra/sdk/abi"
)

// TestVersionCommand: palyra version prints the build information as
// text or JSON, --version the one-line form; an unknown format is a
// usage error.
func TestVersionCommand(t *testing.T) {
	state := t.TempDir()
	for _, args := range [][]string{{"version", "-o", "json"}, {"version", "--json"}, {"--json", "version"}} {
		r := cli(t, state, "", args...)
		var in buildinfo.Info
		if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &in) != nil {
			t.Fatalf("%q: %d %q %q", args, r.code, r.stdout, r.stderr)
		}
		if in.Program != "palyra" || in.ABI != abi.Version || in.GoVersion == "" || in.Commit == "" || in.WasmtimeGo != buildinfo.WasmtimeGoRequired {
			t.Fatalf("%q: %+v", args, in)
		}
	}
	r := cli(t, state, "", "version")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "palyra ") || !strings.Contains(r.stdout, "abi:               "+abi.Version) {
		t.Fatalf("version: %d %q", r.code, r.stdout)
	}
	r = cli(t, state, "", "--version")
	if want := buildinfo.Get("palyra").String() + "\n"; r.code != exitOK || r.stdout != want {
		t.Fatalf("--version: %d %q, want %q", r.code, r.stdout, want)
	}
	if r = cli(t, state, "", "version", "-o", "yaml"); r.code != exitUsage || !strings.Contains(r.stderr, `--output "yaml": use text or json`) {
		t.Fatalf("version -o yaml: %d %q", r.code, r.stderr)
	}
}

// TestDoctorCommand runs palyra doctor with the real sidecar: on a
// state directory that does not exist it fails (exit 1) with
// state_dir_missing and creates nothing; on a fresh one no check fails
// and it exits 0; --deployment hardened without TLS fails.
func TestDoctorCommand(t *testing.T) {
	sidecar := sidecarBinary(t)
	t.Setenv("PALYRA_VAULT_KEY", "")
	t.Setenv("PALYRA_VAULT_KEY_COMMAND", "")
	t.Setenv("PALYRA_SKILLS_TRUST_STORE", "")
	os.Unsetenv("PALYRA_SKILLS_TRUST_STORE")
	missing := filepath.Join(t.TempDir(), "typo")
	r := cli(t, missing, "", "doctor", "--sidecar", sidecar, "-o", "json")
	var rep doctor.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != exitFailure {
		t.Fatalf("doctor on a missing state dir: %d %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if rep.OK || len(rep.Checks) != 9 || rep.Checks[3].Name != doctor.CheckStateDir || rep.Checks[3].Code != "state_dir_missing" || r.stderr != "" {
		t.Fatalf("report %+v, stderr %q", rep, r.stderr)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("doctor created the state directory: %v", err)
	}

	state := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	r = cli(t, state, "", "doctor", "--sidecar", sidecar)
	if r.code != exitOK {
		t.Fatalf("doctor on a fresh state dir: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"ok    sidecar ", "ok    state-dir ", "warn  daemon ", "ok    deployment        local (from the default)", "\n9 checks: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, r.stdout)
		}
	}
	r = cli(t, state, "", "doctor", "--sidecar", sidecar, "--deployment", "hardened")
	if r.code != exitFailure || !strings.Contains(r.stdout, "fail  deployment ") || !strings.Contains(r.stdout, "requires TLS") {
		t.Fatalf("doctor --deployment hardened: %d\n%s", r.code, r.stdout)
	}
	if r = cli(t, state, "", "doctor", "--deployment", "paranoid"); r.code != exitUsage {
		t.Fatalf("doctor --deployment paranoid: %d %q", r.code, r.stderr)
	}
}
