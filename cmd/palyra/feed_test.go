package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFeedDoc writes an unsigned feed document of serial denying the
// module testdata/audit/<module>.wasm, and returns its path.
func writeFeedDoc(t *testing.T, dir string, serial int, module string) string {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join(installFixtures, module+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(mod)
	doc := fmt.Sprintf(`{"schema_version":1,"issuer":"acme-security","serial":%d,"entries":[`+
		`{"kind":"module_sha256","value":"%s","reason":"CVE-2026-9999: escapes its sandbox","reference":"https://example.test/CVE-2026-9999"}]}`,
		serial, hex.EncodeToString(sum[:]))
	p := filepath.Join(dir, fmt.Sprintf("feed-%d.json", serial))
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFeedCommands drives the deny feed through the CLI: feed sign writes
// a signed feed (never over an existing file); feed update refuses it while
// the trust store does not allowlist the issuer (untrusted_deny_feed, with
// the hint), installs it with --trusted-publisher and quarantines the
// installed skill it denies, naming the reason; feed show prints it; then,
// through a daemon, a newer feed installs over HTTP, show reports it, an
// older one is refused (deny_feed_not_newer) and --trusted-publisher is
// local-only.
func TestFeedCommands(t *testing.T) {
	shortTMPDIR(t)
	state, dir := t.TempDir(), t.TempDir()
	seed := bytes.Repeat([]byte{0x42}, ed25519.SeedSize)
	keyFile := filepath.Join(dir, "issuer.key")
	if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(seed)), 0o600); err != nil {
		t.Fatal(err)
	}
	issuerHex := hex.EncodeToString(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))

	if r := cli(t, state, "", "skills", "install", "--artifact", goodSkill.write(t, dir), "--trusted-publisher", "acme="+echoPub); r.code != 0 {
		t.Fatalf("install: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	signed1 := filepath.Join(dir, "deny-1.json")
	r := cli(t, state, "", "feed", "sign", writeFeedDoc(t, dir, 1, "palyra_baseline"), "--key", keyFile, "--out", signed1)
	if r.code != 0 || !strings.Contains(r.stdout, "feed.sign") || !strings.Contains(r.stdout, "serial=1") {
		t.Fatalf("sign: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := cli(t, state, "", "feed", "sign", writeFeedDoc(t, dir, 1, "palyra_baseline"), "--key", keyFile, "--out", signed1); r.code == 0 || !strings.Contains(r.stderr, "exists") {
		t.Fatalf("sign over an existing file: %d %s", r.code, r.stderr)
	}
	if r := cli(t, state, "", "feed", "show"); r.code != 0 || !strings.Contains(r.stdout, "No deny feed is installed") {
		t.Fatalf("show before: %d %s %s", r.code, r.stdout, r.stderr)
	}

	r = cli(t, state, "", "feed", "update", signed1, "--json")
	if code := r.failure(t, nil); code != "untrusted_deny_feed" || !strings.Contains(r.stdout, "--trusted-publisher") {
		t.Fatalf("untrusted feed: %s\n%s", code, r.stdout)
	}
	r = cli(t, state, "", "feed", "update", signed1, "--trusted-publisher", "acme-security="+issuerHex)
	if r.code != 0 || !strings.Contains(r.stdout, "serial=1") || !strings.Contains(r.stdout, "quarantined=1") ||
		!strings.Contains(r.stdout, "acme.good") || !strings.Contains(r.stdout, "CVE-2026-9999: escapes its sandbox") {
		t.Fatalf("update: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if e := listEntries(t, state); len(e) != 1 || e[0]["status"] != "quarantined" {
		t.Fatalf("list after the update: %v", e)
	}
	r = cli(t, state, "", "feed", "show", "-o", "wide")
	for _, w := range []string{"Issuer:      acme-security", "Serial:      1", "module_sha256", "https://example.test/CVE-2026-9999", "CVE-2026-9999: escapes its sandbox", issuerHex} {
		if r.code != 0 || !strings.Contains(r.stdout, w) {
			t.Fatalf("show does not say %q: %d\n%s\n%s", w, r.code, r.stdout, r.stderr)
		}
	}

	url := startDaemon(t, state)
	signed2 := filepath.Join(dir, "deny-2.json")
	if r := cli(t, state, "", "feed", "sign", writeFeedDoc(t, dir, 2, "reactor"), "--key", keyFile, "--out", signed2); r.code != 0 {
		t.Fatalf("sign 2: %d %s", r.code, r.stderr)
	}
	var up struct {
		Feed struct {
			Serial uint64 `json:"serial"`
		} `json:"feed"`
		PreviousSerial uint64 `json:"previous_serial"`
		Changed        bool   `json:"changed"`
	}
	cli(t, state, "", "feed", "update", signed2, "--url", url, "--json").decode(t, &up)
	if up.Feed.Serial != 2 || up.PreviousSerial != 1 || !up.Changed {
		t.Fatalf("update through the daemon: %+v", up)
	}
	var show struct {
		Installed bool             `json:"installed"`
		Serial    uint64           `json:"serial"`
		Entries   []map[string]any `json:"entries"`
	}
	cli(t, state, "", "feed", "show", "--url", url, "--json").decode(t, &show)
	if !show.Installed || show.Serial != 2 || len(show.Entries) != 1 {
		t.Fatalf("show through the daemon: %+v", show)
	}
	if code := cli(t, state, "", "feed", "update", signed1, "--url", url, "--json").failure(t, nil); code != "deny_feed_not_newer" {
		t.Fatalf("older feed through the daemon: %s", code)
	}
	if r := cli(t, state, "", "feed", "update", signed2, "--url", url, "--trusted-publisher", "acme-security="+issuerHex); r.code == 0 || !strings.Contains(r.stderr, "local-only") {
		t.Fatalf("--trusted-publisher with --url: %d %s", r.code, r.stderr)
	}
}
