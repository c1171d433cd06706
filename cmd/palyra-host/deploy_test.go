package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/host/daemon"
)

// The files under deploy/ are what an operator copies; these tests keep
// them true to the code: the configuration parses and validates, the
// command lines parse with serve's real flags, and the environment names
// are the ones cmd/ resolves.

const deployDir = "../../deploy"

// knownEnv are the environment variables the binaries resolve.
var knownEnv = map[string]bool{
	cliconfig.EnvStateDir: true, cliconfig.EnvSidecar: true, cliconfig.EnvTrustStore: true,
	cliconfig.EnvVaultKey: true, cliconfig.EnvVaultKeyCommand: true,
}

func TestDeployConfigIsValid(t *testing.T) {
	cfg, err := daemon.LoadConfig(filepath.Join(deployDir, "palyra-host.toml"))
	if err != nil {
		t.Fatalf("deploy/palyra-host.toml: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("deploy/palyra-host.toml does not validate: %v", err)
	}
	if cfg.Deployment != daemon.DeploymentHardened {
		t.Errorf("deploy/palyra-host.toml: deployment %q, want hardened for production", cfg.Deployment)
	}
	if !cfg.TLS.Enabled() {
		t.Fatalf("deploy/palyra-host.toml listens on %q without [tls]", cfg.Listen)
	}
}

// serveArgsParse parses args (after "palyra-host") with the real command
// tree, stopping before anything runs.
func serveArgsParse(t *testing.T, where string, args []string) {
	t.Helper()
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("%s: the command line %q does not start with serve", where, args)
	}
	var state string
	c := serveCommand(&state, nil, nil)
	c.PersistentFlags().StringVar(&state, "state-dir", "", "")
	if err := c.ParseFlags(args[1:]); err != nil {
		t.Fatalf("%s: serve does not take %q: %v", where, args[1:], err)
	}
	if cfg, _ := c.Flags().GetString("config"); cfg != "" && !strings.HasPrefix(cfg, "/etc/palyra/") {
		t.Errorf("%s: --config %s is not under /etc/palyra, where the unit and the image expect it", where, cfg)
	}
}

func TestSystemdUnit(t *testing.T) {
	f, err := os.Open(filepath.Join(deployDir, "systemd", "palyra-host.service"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var execStart []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			execStart = strings.Fields(v)
		}
		if v, ok := strings.CutPrefix(line, "Environment="); ok {
			name, _, _ := strings.Cut(v, "=")
			if !knownEnv[name] {
				t.Errorf("the unit sets %s, which no binary reads", name)
			}
		}
		if strings.HasPrefix(line, "MemoryDenyWriteExecute=yes") {
			t.Error("MemoryDenyWriteExecute=yes stops wasmtime from compiling modules")
		}
	}
	if len(execStart) < 2 || filepath.Base(execStart[0]) != "palyra-host" {
		t.Fatalf("ExecStart %q does not run palyra-host", execStart)
	}
	serveArgsParse(t, "systemd ExecStart", execStart[1:])
}

func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(deployDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{"./cmd/palyra ", "./cmd/palyra-host ", "./cmd/palyra-sidecar "} {
		if !strings.Contains(text, want) {
			t.Errorf("the Dockerfile does not build %s", strings.TrimSpace(want))
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:ENV\s+)?(PALYRA_[A-Z_]+)=`).FindAllStringSubmatch(text, -1) {
		if !knownEnv[m[1]] {
			t.Errorf("the Dockerfile sets %s, which no binary reads", m[1])
		}
	}
	if !regexp.MustCompile(`(?m)^USER\s+[1-9]`).MatchString(text) {
		t.Error("the runtime image does not switch to a non-root USER")
	}
	cmd := regexp.MustCompile(`(?m)^CMD\s+(\[.*\])\s*$`).FindStringSubmatch(text)
	if cmd == nil {
		t.Fatal("the Dockerfile has no CMD [...] line")
	}
	var args []string
	if err := json.Unmarshal([]byte(cmd[1]), &args); err != nil {
		t.Fatalf("CMD %s: %v", cmd[1], err)
	}
	serveArgsParse(t, "Dockerfile CMD", args)
}
