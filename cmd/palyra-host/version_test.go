package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/internal/buildinfo"
	"github.com/palyra-go/palyra/sdk/abi"
)

// TestVersion runs the built palyra-host and palyra-sidecar: version,
// --version and version -o json answer with exit 0 (palyra-host
// --version used to be an internal error), the sidecar matches, and an
// unknown flag is a usage error with exit status 2.
func TestVersion(t *testing.T) {
	host := filepath.Join(bin, "palyra-host")
	out, err := exec.Command(host, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "palyra-host ") || strings.Count(string(out), "\n") != 1 {
		t.Fatalf("--version: %v %q", err, out)
	}
	out, err = exec.Command(host, "version").Output()
	if err != nil || !strings.Contains(string(out), "abi:               "+abi.Version) {
		t.Fatalf("version: %v %q", err, out)
	}
	var hostInfo, sideInfo buildinfo.Info
	for _, c := range []struct {
		path string
		args []string
		into *buildinfo.Info
	}{
		{host, []string{"version", "-o", "json"}, &hostInfo},
		{filepath.Join(bin, "palyra-sidecar"), []string{"--version", "--json"}, &sideInfo},
	} {
		out, err := exec.Command(c.path, c.args...).Output()
		if err != nil || json.Unmarshal(out, c.into) != nil {
			t.Fatalf("%s %q: %v %q", c.path, c.args, err, out)
		}
	}
	if hostInfo.Program != "palyra-host" || hostInfo.WasmtimeLinked || sideInfo.Program != "palyra-sidecar" || !sideInfo.WasmtimeLinked || sideInfo.Kernel == nil {
		t.Fatalf("host %+v, sidecar %+v", hostInfo, sideInfo)
	}
	if diff := hostInfo.Compatible(sideInfo); diff != "" || hostInfo.Commit != sideInfo.Commit || hostInfo.WasmtimeGo != sideInfo.WasmtimeGo {
		t.Fatalf("binaries of one build differ: %s; host %+v, sidecar %+v", diff, hostInfo, sideInfo)
	}
	cmd := exec.Command(host, "--bogus")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "palyra-host: usage: ") {
		t.Fatalf("--bogus: %v %q", err, stderr.String())
	}
}
