package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestHeldBackUpgrade drives the held-back upgrade through the CLI: a
// 1.1.0 failing the audit over an active 1.0.0 exits audit_failed and says
// it is held back; skills info shows it with its code; skills enable
// --version 1.1.0 refuses (override_required, then audit_failed) and the
// current version stays 1.0.0.
func TestHeldBackUpgrade(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	trusted := "acme=" + echoPub
	good := skillArtifact{id: "acme.up", version: "1.0.0", module: "palyra_baseline"}
	bad := skillArtifact{id: "acme.up", version: "1.1.0", module: "wasi_path_open"}
	var out installOut
	cli(t, state, "", "skills", "install", "--json", "--artifact", good.write(t, dir), "--trusted-publisher", trusted).decode(t, &out)

	r := cli(t, state, "", "skills", "install", "--artifact", bad.write(t, dir))
	if r.code != exitFailure || !strings.Contains(r.stdout, "current=false") || !strings.Contains(r.stdout, "held_back=audit_failed (1.0.0 stays current") ||
		!strings.Contains(r.stderr, "[audit_failed]") {
		t.Fatalf("install 1.1.0: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, state, "", "skills", "info", "acme.up")
	if r.code != 0 || !regexp.MustCompile(`(?m)^Version: +1\.0\.0$`).MatchString(r.stdout) ||
		!regexp.MustCompile(`Held back:\n  VERSION +STATUS +CODE +MESSAGE\n  1\.1\.0 +quarantined +audit_failed +\S`).MatchString(r.stdout) {
		t.Fatalf("info: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, state, "", "skills", "enable", "acme.up", "--version", "1.1.0", "--reason", "try", "--json")
	if code := r.failure(t, nil); code != "override_required" {
		t.Fatalf("enable --version 1.1.0: %s %s", code, r.stdout)
	}
	r = cli(t, state, "", "skills", "enable", "acme.up", "--version", "1.1.0", "--override", "--reason", "try", "--json")
	if code := r.failure(t, nil); code != "audit_failed" {
		t.Fatalf("enable --version 1.1.0 --override: %s %s", code, r.stdout)
	}
	if e := listEntries(t, state, "--current-only"); len(e) != 1 || e[0]["version"] != "1.0.0" || e[0]["status"] != "active" {
		t.Fatalf("current after the refused enable: %v", e)
	}
}
