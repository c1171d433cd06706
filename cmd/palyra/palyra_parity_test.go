package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestPalyraDaemonPinSealedForCLI is §10 item 12 of the facts: Palyra's
// daemon writes the trust store without its integrity digest, so the next
// CLI run reports a mismatch whenever the daemon pinned a key (a TOFU
// install from the console). Here the daemon's pin is sealed in the same
// write: the local CLI then reads the store as intact and sees the pin.
func TestPalyraDaemonPinSealedForCLI(t *testing.T) {
	state, dir := t.TempDir(), t.TempDir()
	shortTMPDIR(t)
	t.Setenv(sidecarEnv, sidecarBinary(t))
	remote, local := skillsVerbs(t, state, startDaemon(t, state))
	var out installOut
	remote("install", "--json", "--artifact", probeArtifact(t, dir, "test.pinned", "0.1.0"), "--allow-tofu").decode(t, &out)
	if out.TrustDecision != "tofu_newly_pinned" {
		t.Fatalf("install through the daemon: %+v", out)
	}
	var store struct {
		TOFU map[string]string `json:"tofu_publishers"`
	}
	cli(t, state, "", "trust", "show", "--json").decode(t, &store)
	if store.TOFU["test"] == "" {
		t.Fatalf("trust show after the daemon's pin: %+v", store)
	}
	var v struct {
		TrustDecision string `json:"trust_decision"`
	}
	local("verify", "test.pinned", "--json").decode(t, &v)
	if v.TrustDecision != "tofu_pinned" {
		t.Fatalf("local verify after the daemon's pin: %+v", v)
	}
}

// TestPalyraTamperedArtifactInstall is the tampered-artifact case of
// Palyra's CLI lifecycle test (facts §11): one byte flipped in the middle
// of the .palyra-skill file makes install fail, and nothing is installed.
// Palyra flips the middle byte; the other rows flip bytes in the other
// parts of the ZIP. Only a byte outside what is signed (an entry's
// external attributes in the central directory, which the reader does
// not use) leaves the artifact installable. docs/palyra-parity.md cites
// it.
func TestPalyraTamperedArtifactInstall(t *testing.T) {
	good, err := os.ReadFile(goodSkill.write(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	eocd := bytes.LastIndex(good, []byte("PK\x05\x06"))
	if eocd < 0 {
		t.Fatal("no end of central directory record")
	}
	cd := int(binary.LittleEndian.Uint32(good[eocd+16:]))
	if !bytes.HasPrefix(good[cd:], []byte("PK\x01\x02")) {
		t.Fatalf("no central directory header at %d", cd)
	}
	for _, tt := range []struct {
		name      string
		at        int
		installed bool
	}{
		{"middle", len(good) / 2, false},
		{"first quarter", len(good) / 4, false},
		{"third quarter", len(good) * 3 / 4, false},
		{"central directory name", cd + 46, false},
		{"central directory size", cd + 24, false},
		{"central directory external attributes", cd + 38, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			bad := append([]byte(nil), good...)
			bad[tt.at] ^= 0x01
			p := filepath.Join(t.TempDir(), "tampered.palyra-skill")
			if err := os.WriteFile(p, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			r := cli(t, state, "", "skills", "install", "--json", "--artifact", p, "--trusted-publisher", "acme="+echoPub)
			if tt.installed {
				r.decode(t, &installOut{})
				if e := listEntries(t, state); len(e) != 1 {
					t.Fatalf("list: %v", e)
				}
				return
			}
			if r.code != exitFailure {
				t.Fatalf("install of a tampered artifact: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			t.Logf("byte %d of %d: %s", tt.at, len(good), r.errorCode(t))
			if e := listEntries(t, state); len(e) != 0 {
				t.Fatalf("installed: %v", e)
			}
		})
	}
}
