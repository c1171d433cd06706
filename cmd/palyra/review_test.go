package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestReviewApprove drives review status through the CLI: builder output
// with review_status "pending" installs quarantined (review_pending, with
// the hint naming skills review approve); enable --override refuses it;
// review list shows it in a table; approve needs --reason, then journals
// the approval and enables it; review list is empty afterwards. An upgrade
// to a pending version is held back and the active one keeps serving.
func TestReviewApprove(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	trusted := "acme=" + echoPub
	pending := skillArtifact{id: "acme.gen", version: "1.0.0", module: "palyra_baseline", review: "pending"}

	r := cli(t, state, "", "skills", "install", "--json", "--artifact", pending.write(t, dir), "--trusted-publisher", trusted)
	if code := r.failure(t, nil); code != "review_pending" || !strings.Contains(r.stdout+r.stderr, "palyra skills review approve") {
		t.Fatalf("install: %s\n%s\n%s", code, r.stdout, r.stderr)
	}
	if e := listEntries(t, state); len(e) != 1 || e[0]["status"] != "quarantined" || e[0]["review_pending"] != true {
		t.Fatalf("list after install: %v", e)
	}
	r = cli(t, state, "", "skills", "enable", "acme.gen", "--override", "--reason", "try", "--json")
	if code := r.failure(t, nil); code != "review_pending" {
		t.Fatalf("enable --override: %s %s", code, r.stdout)
	}
	r = cli(t, state, "", "skills", "review", "list")
	if r.code != 0 || !regexp.MustCompile(`(?m)^SKILL +VERSION +PUBLISHER +CURRENT +STATUS +HELD_BACK\n`+`acme\.gen +1\.0\.0 +acme +\* +quarantined +-`).MatchString(r.stdout) {
		t.Fatalf("review list: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r = cli(t, state, "", "skills", "review", "approve", "acme.gen"); r.code == 0 || !strings.Contains(r.stderr, "reason") {
		t.Fatalf("approve without --reason: exit %d\n%s", r.code, r.stderr)
	}
	r = cli(t, state, "", "skills", "review", "approve", "acme.gen", "--reason", "checklist read", "--principal", "alice")
	if r.code != 0 || !strings.Contains(r.stdout, "skill.review_approved") || !strings.Contains(r.stdout, "active") {
		t.Fatalf("approve: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, state, "", "skills", "info", "acme.gen", "--json")
	if r.code != 0 || !regexp.MustCompile(`"kind": ?"skill\.enabled"[^}]*"reason": ?"review approved: checklist read"`).MatchString(r.stdout) {
		t.Fatalf("info after approval: exit %d\n%s", r.code, r.stdout)
	}
	if r = cli(t, state, "", "skills", "review", "list"); r.code != 0 || !strings.Contains(r.stdout, "No skill version awaits review.") {
		t.Fatalf("review list after approval: %s", r.stdout)
	}

	up := skillArtifact{id: "acme.gen", version: "1.1.0", module: "palyra_baseline", review: "pending"}
	r = cli(t, state, "", "skills", "install", "--artifact", up.write(t, dir))
	if r.code != exitFailure || !strings.Contains(r.stdout, "held_back=review_pending") || !strings.Contains(r.stderr, "[review_pending]") {
		t.Fatalf("install pending 1.1.0: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if e := listEntries(t, state, "--current-only"); len(e) != 1 || e[0]["version"] != "1.0.0" || e[0]["status"] != "active" {
		t.Fatalf("current after the pending upgrade: %v", e)
	}
	r = cli(t, state, "", "skills", "review", "approve", "acme.gen", "--version", "1.1.0", "--reason", "diff read")
	if r.code != 0 {
		t.Fatalf("approve 1.1.0: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if e := listEntries(t, state, "--current-only"); len(e) != 1 || e[0]["version"] != "1.1.0" || e[0]["status"] != "active" {
		t.Fatalf("current after approving 1.1.0: %v", e)
	}
}
