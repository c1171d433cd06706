package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/registry"
	"github.com/palyra-go/palyra/internal/testtls"
)

// indexSeed is the registry index key of these tests (0x02×32), publisher
// hub.
const indexSeed = "0202020202020202020202020202020202020202020202020202020202020202"

// registryInstallOut is the part of skills install --json these tests read.
type registryInstallOut struct {
	SkillID   string `json:"skill_id"`
	Version   string `json:"version"`
	Installed bool   `json:"installed"`
	Source    struct {
		Kind string `json:"kind"`
		Ref  string `json:"reference"`
	} `json:"source"`
}

// buildRegistry writes goodSkill and webSkill 1.0.0 and 1.1.0 into a new
// directory and builds its index with palyra skills registry build.
func buildRegistry(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	goodSkill.write(t, dir)
	if err := os.MkdirAll(filepath.Join(dir, "web"), 0o755); err != nil {
		t.Fatal(err)
	}
	webSkill.write(t, filepath.Join(dir, "web"))
	webSkill11.write(t, filepath.Join(dir, "web"))
	var rep struct {
		IndexPath string `json:"index_path"`
		Entries   int    `json:"entries"`
		Publisher string `json:"publisher"`
		KeyID     string `json:"key_id"`
	}
	cli(t, t.TempDir(), indexSeed, "skills", "registry", "build", "--json", "--dir", dir, "--signing-key-stdin", "--publisher", "hub").decode(t, &rep)
	if rep.IndexPath != filepath.Join(dir, "index.json") || rep.Entries != 3 || rep.Publisher != "hub" || !strings.HasPrefix(rep.KeyID, "ed25519:") {
		t.Fatalf("registry build: %+v", rep)
	}
	return dir
}

// TestRegistryBuildAndInstall: registry build writes a signed index; skills
// install takes a skill from it as a directory and served over HTTPS with
// the test's own CA (--registry-ca-cert), latest or a named version,
// recording the source; the refusals are usage errors and their codes.
func TestRegistryBuildAndInstall(t *testing.T) {
	dir := buildRegistry(t)
	data, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := registry.Parse(data); err != nil {
		t.Fatalf("the written index does not parse: %v", err)
	}
	// Text output names the index, the entries and the key.
	r := cli(t, t.TempDir(), indexSeed, "skills", "registry", "build", "--dir", dir, "--signing-key-stdin", "--publisher", "hub")
	if r.code != 0 || !strings.Contains(r.stdout, "entries=3") || !strings.Contains(r.stdout, "key_id=ed25519:") {
		t.Fatalf("text build: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	t.Run("dir", func(t *testing.T) {
		state := t.TempDir()
		var out registryInstallOut
		cli(t, state, "", "skills", "install", "--json", "--registry-dir", dir, "--skill", "acme.web", "--allow-tofu").decode(t, &out)
		if !out.Installed || out.SkillID != "acme.web" || out.Version != "1.1.0" || out.Source.Kind != "local_registry" || out.Source.Ref != dir {
			t.Fatalf("install --registry-dir: %+v", out)
		}
	})

	srv, ca := testtls.Serve(t, nil, http.FileServer(http.Dir(dir)))
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("url", func(t *testing.T) {
		state := t.TempDir()
		var out registryInstallOut
		cli(t, state, "", "skills", "install", "--json", "--registry-url", srv.URL+"/index.json", "--skill", "acme.web", "--version", "1.0.0",
			"--registry-ca-cert", caFile, "--allow-tofu").decode(t, &out)
		if !out.Installed || out.Version != "1.0.0" || out.Source.Kind != "remote_registry" || out.Source.Ref != srv.URL+"/index.json" {
			t.Fatalf("install --registry-url: %+v", out)
		}
	})

	for _, c := range []struct {
		name string
		args []string
		code string
	}{
		{"artifact and registry", []string{"--artifact", "x.palyra-skill", "--registry-dir", dir, "--skill", "acme.web"}, "usage"},
		{"no skill", []string{"--registry-dir", dir}, "usage"},
		{"both registries", []string{"--registry-dir", dir, "--registry-url", srv.URL, "--skill", "acme.web"}, "usage"},
		{"nothing", nil, "usage"},
		{"http URL", []string{"--registry-url", strings.Replace(srv.URL, "https:", "http:", 1) + "/index.json", "--skill", "acme.web"}, "registry_insecure_url"},
		{"unknown CA", []string{"--registry-url", srv.URL + "/index.json", "--skill", "acme.web", "--allow-tofu"}, "registry_fetch_failed"},
		{"untrusted index key", []string{"--registry-dir", dir, "--skill", "acme.web"}, "untrusted_publisher"},
		{"not published", []string{"--registry-dir", dir, "--skill", "acme.web", "--version", "9.0.0", "--allow-tofu"}, "not_published"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, t.TempDir(), "", append([]string{"skills", "install", "--json"}, c.args...)...)
			if got := r.errorCode(t); got != c.code {
				t.Fatalf("code %s, want %s\n%s", got, c.code, r.stdout)
			}
		})
	}
}

// TestRegistryDirThroughDaemon: with --url, a --registry-dir is read here
// and the artifact uploaded to the daemon, which installs it.
func TestRegistryDirThroughDaemon(t *testing.T) {
	dir := buildRegistry(t)
	state := t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))
	url := startDaemon(t, state)
	var out registryInstallOut
	cli(t, state, "", "skills", "install", "--url", url, "--json", "--registry-dir", dir, "--skill", "acme.good", "--allow-tofu").decode(t, &out)
	if !out.Installed || out.SkillID != "acme.good" || out.Version != "1.0.0" {
		t.Fatalf("install through the daemon: %+v", out)
	}
}

// TestRegistryBuildErrors: the key comes from exactly one source; a
// directory with a file that fails inspection is refused naming it.
func TestRegistryBuildErrors(t *testing.T) {
	dir := t.TempDir()
	goodSkill.write(t, dir)
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(indexSeed), 0o600); err != nil {
		t.Fatal(err)
	}
	build := func(stdin string, args ...string) result {
		return cli(t, t.TempDir(), stdin, append([]string{"skills", "registry", "build", "--json", "--dir", dir}, args...)...)
	}
	if code := build("").errorCode(t); code != "usage" {
		t.Fatalf("no key: %s", code)
	}
	if code := build(indexSeed, "--signing-key", keyFile, "--signing-key-stdin").errorCode(t); code != "usage" {
		t.Fatalf("two keys: %s", code)
	}
	var rep struct {
		Entries   int    `json:"entries"`
		Publisher string `json:"publisher"`
	}
	build("", "--signing-key", keyFile).decode(t, &rep)
	if rep.Entries != 1 || rep.Publisher != "acme" {
		t.Fatalf("build with a key file: %+v", rep)
	}
	bad := filepath.Join(dir, "sub", "bad.palyra-skill")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := build("", "--signing-key", keyFile)
	if code := r.errorCode(t); code != "registry_build_failed" || !strings.Contains(r.stdout, "bad.palyra-skill") {
		t.Fatalf("bad artifact: %s %s", code, r.stdout)
	}
}
