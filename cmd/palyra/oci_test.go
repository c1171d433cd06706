package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/internal/ociregistry"
)

// TestOCIPushInstall drives skills push and skills install oci:// against
// a real registry process with htpasswd auth (credentials from
// $DOCKER_CONFIG), over plain HTTP on loopback. Push prints the digest; install by tag and by digest records the
// oci source; without credentials the push fails with oci_unauthorized;
// --plain-http to a non-loopback registry is oci_plain_http_refused;
// --artifact with a reference is a usage error.
func TestOCIPushInstall(t *testing.T) {
	reg := ociregistry.Start(t, ociregistry.Options{Username: "pub", Password: "pw"})
	dir := t.TempDir()
	art := goodSkill.write(t, dir)
	repo := "oci://" + reg.Host + "/skills/good"

	t.Setenv("DOCKER_CONFIG", t.TempDir())
	r := cli(t, t.TempDir(), "", "skills", "push", "--json", art, repo, "--plain-http")
	if code := r.failure(t, nil); code != "oci_unauthorized" {
		t.Fatalf("push without credentials: %s\n%s", code, r.stdout)
	}

	cfgDir := t.TempDir()
	if _, err := reg.WriteDockerConfig(cfgDir, "pub", "pw"); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", cfgDir)
	var pushed pushReport
	cli(t, t.TempDir(), "", "skills", "push", "--json", art, repo, "--plain-http").decode(t, &pushed)
	if pushed.Tag != "1.0.0" || pushed.SkillID != "acme.good" || !strings.HasPrefix(pushed.Digest, "sha256:") ||
		pushed.Reference != repo+":1.0.0@"+pushed.Digest {
		t.Fatalf("push: %+v", pushed)
	}
	text := cli(t, t.TempDir(), "", "skills", "push", art, repo+":stable", "--plain-http")
	if text.code != 0 || !strings.Contains(text.stdout, "digest="+pushed.Digest) || !strings.Contains(text.stdout, "tag=stable") {
		t.Fatalf("text push: %d %s %s", text.code, text.stdout, text.stderr)
	}

	for _, ref := range []string{repo + ":1.0.0", repo + "@" + pushed.Digest} {
		state := t.TempDir()
		var out installOut
		cli(t, state, "", "skills", "install", "--json", ref, "--plain-http", "--trusted-publisher", "acme="+echoPub).decode(t, &out)
		if out.SkillID != "acme.good" || !out.Installed || out.Status != "active" {
			t.Fatalf("install %s: %+v", ref, out)
		}
		e := listEntries(t, state)
		src, _ := e[0]["source"].(map[string]any)
		if len(e) != 1 || src["kind"] != "oci" || src["reference"] != pushed.Reference && src["reference"] != ref {
			t.Fatalf("install %s: list %v", ref, e)
		}
	}

	for _, tc := range []struct {
		args []string
		code string
	}{
		{[]string{"skills", "install", "--json", "oci://registry.example.com/skills/good:1.0.0", "--plain-http"}, "oci_plain_http_refused"},
		{[]string{"skills", "install", "--json", repo + ":1.0.0", "--artifact", art}, "usage"},
		{[]string{"skills", "install", "--json", "--artifact", art, "--plain-http"}, "usage"},
		{[]string{"skills", "push", "--json", filepath.Join(dir, "missing"), repo}, ""},
		{[]string{"skills", "push", "--json", art, "docker://x/y"}, "oci_invalid_reference"},
	} {
		r := cli(t, t.TempDir(), "", tc.args...)
		code := r.failure(t, nil)
		if tc.code != "" && code != tc.code {
			t.Fatalf("%v: %s, want %s\n%s", tc.args, code, tc.code, r.stdout)
		}
	}
	if _, err := os.Stat(art); err != nil {
		t.Fatal(err)
	}
}
