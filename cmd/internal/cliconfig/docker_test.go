package cliconfig_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
)

// TestDockerConfig resolves the docker credential file: $DOCKER_CONFIG
// first, then ~/.docker/config.json only when it exists, else none; and
// $PALYRA_OCI_PLAIN_HTTP=1 turns on plain HTTP (loopback-only in host/oci).
func TestDockerConfig(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(cliconfig.EnvDockerConfig, "")
	t.Setenv(cliconfig.EnvOCIPlainHTTP, "")
	if got := cliconfig.Sources(); got.DockerConfig != "" || got.PlainHTTP {
		t.Fatalf("nothing set: %+v", got)
	}
	homeCfg := filepath.Join(home, ".docker", "config.json")
	if err := os.MkdirAll(filepath.Dir(homeCfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(homeCfg, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := cliconfig.DockerConfig(); got != homeCfg {
		t.Fatalf("home config: %q, want %q", got, homeCfg)
	}
	d := t.TempDir()
	t.Setenv(cliconfig.EnvDockerConfig, d)
	t.Setenv(cliconfig.EnvOCIPlainHTTP, "1")
	if got := cliconfig.Sources(); got.DockerConfig != filepath.Join(d, "config.json") || !got.PlainHTTP {
		t.Fatalf("$DOCKER_CONFIG: %+v", got)
	}
}
