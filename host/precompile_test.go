package host_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host"
)

// TestInstallPrecompileEnvironment installs a skill through a Host while
// the host's environment holds secrets: the precompile child the install
// starts (a script standing in for palyra-sidecar that copies its
// environment into the cache dir) has none of them and runs with a private
// TMPDIR, removed after it.
func TestInstallPrecompileEnvironment(t *testing.T) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	secret := hex.EncodeToString(b[:])
	t.Setenv("PALYRA_VAULT_KEY", secret)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret+"aws")
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake-sidecar")
	// Arguments: precompile --wasm M --cache-dir C [--sha256 S].
	script := "#!/bin/sh\ntr '\\000' '\\n' < /proc/self/environ > \"$5/environ\"\necho '{\"abi_version\":\"x\",\"cache_status\":\"miss\"}'\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	ctx := context.Background()
	h, err := host.Open(ctx, host.Config{StateDir: filepath.Join(dir, "state"), SidecarPath: fake, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	data, _, err := buildEcho()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Install(ctx, host.InstallRequest{Artifact: data, AllowTOFU: true}); err != nil {
		t.Fatalf("install: %v", err)
	}
	env, err := os.ReadFile(filepath.Join(cache, "environ"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(env, []byte(secret)) {
		t.Fatalf("the precompile child inherited a secret:\n%s", env)
	}
	var tmp string
	for _, kv := range strings.Split(string(env), "\n") {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
			tmp = v
		}
	}
	if tmp == "" || tmp == os.TempDir() {
		t.Errorf("TMPDIR %q, want a private dir", tmp)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the child's private dir %s outlived it: %v", tmp, err)
	}
}
