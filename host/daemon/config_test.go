package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != DefaultListen || c.ReauditInterval.Duration != DefaultReauditInterval || c.HookTimeout.Duration != DefaultHookTimeout || c.MaxRequestBytes != DefaultMaxRequestBytes {
		t.Errorf("defaults: %+v", c)
	}
	c, err = ParseConfig([]byte("reaudit_interval = \"0\"\n[anomaly]\nwindow = \"1m\"\nthresholds = { trap = 3 }\n[[channels]]\nname = \"ops\"\ntype = \"log\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ReauditInterval.Duration != 0 || c.Anomaly.Thresholds["trap"] != 3 || c.Anomaly.Window.Duration != time.Minute || len(c.Channels) != 1 {
		t.Errorf("parsed: %+v", c)
	}
	bad := []struct{ in, want string }{
		{"surprise = 1", "unknown key"},
		{`listen = "0.0.0.0:7142"`, "not a loopback address"},
		{`listen = ":7142"`, "not a loopback address"},
		{`listen = "127.0.0.1"`, "missing port"},
		{`reaudit_interval = "-1s"`, "negative"},
		{`reaudit_interval = "1ms"`, "under 100ms"},
		{`reaudit_interval = "soon"`, `key reaudit_interval (line 1, column 20): "soon" is not a duration`},
		{"[anomaly]\nwindow = \"five minutes\"", `key anomaly.window (line 2, column 10): "five minutes" is not a duration`},
		{`hook_timeout = "11m"`, "outside 0..10m"},
		{`hook_retries = -1`, "hook_retries -1 is outside 0..100"},
		{`hook_retry_backoff = "11m"`, "hook_retry_backoff 11m0s is outside 0..10m"},
		{`max_request_bytes = 10`, "outside 1 KiB..64 MiB"},
		{"[tls]\ncert_file = \"a.crt\"", "needs both"},
		{"[anomaly]\nwindow = \"1m\"\nthresholds = { gremlins = 1 }", "gremlins"},
		{"[[channels]]\nname = \"x\"\ntype = \"pigeon\"", "pigeon"},
		{strings.Repeat("#", MaxConfigBytes+1), "limit"},
	}
	for _, b := range bad {
		_, err := ParseConfig([]byte(b.in))
		if !errors.Is(err, ErrInvalidConfig) && !errors.Is(err, ErrInsecureListen) {
			t.Errorf("%q: %v, want ErrInvalidConfig", b.in, err)
			continue
		}
		if !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: %v, want it to mention %q", b.in, err, b.want)
		}
	}
	// TLS makes any address acceptable.
	if _, err := ParseConfig([]byte("listen = \"0.0.0.0:7142\"\n[tls]\ncert_file = \"a\"\nkey_file = \"b\"\n")); err != nil {
		t.Errorf("with TLS: %v", err)
	}
}

func TestCheckListen(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:1": true, "[::1]:1": true, "localhost:1": true, "127.8.9.10:0": true, "0.0.0.0:1": false, "[::]:1": false, "10.0.0.1:1": false, "example.com:1": false} {
		if err := CheckListen(addr, false); (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

func TestToken(t *testing.T) {
	state := t.TempDir()
	created, err := EnsureToken(state)
	if err != nil || !created {
		t.Fatalf("first EnsureToken: %v %v", created, err)
	}
	if created, err = EnsureToken(state); err != nil || created {
		t.Fatalf("second EnsureToken: %v %v", created, err)
	}
	fi, err := os.Stat(TokenPath(state))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode: %v %v", fi.Mode(), err)
	}
	tok, err := ReadToken(TokenPath(state))
	if err != nil || !strings.HasPrefix(tok, tokenPrefix) || len(tok) < 40 {
		t.Fatalf("token %q: %v", tok, err)
	}
	a, err := NewAuthenticator(TokenPath(state))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		header string
		ok     bool
	}{
		{"Bearer " + tok, true},
		{"bearer " + tok, true},
		{"Bearer  " + tok + " ", true},
		{"", false},
		{tok, false},
		{"Basic " + tok, false},
		{"Bearer " + tok + "x", false},
		{"Bearer " + tok[:len(tok)-1], false},
		{"Bearer", false},
	}
	for _, c := range cases {
		err := a.CheckAuthorization(c.header)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrUnauthorized)) {
			t.Errorf("%q: %v", c.header, err)
		}
	}
	// Rotation is picked up without a restart.
	newTok, err := RotateToken(state)
	if err != nil || newTok == tok {
		t.Fatalf("rotate: %v", err)
	}
	if a.CheckAuthorization("Bearer "+tok) == nil || a.CheckAuthorization("Bearer "+newTok) != nil {
		t.Error("the authenticator did not follow the rotation")
	}
	// A token file others can read is refused; so every request fails.
	if err := os.Chmod(TokenPath(state), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(TokenPath(state), time.Now().Add(time.Minute), time.Now().Add(time.Minute))
	if err := a.CheckAuthorization("Bearer " + newTok); !errors.Is(err, ErrTokenFile) {
		t.Errorf("world-readable token file: %v", err)
	}
	if _, err := ReadToken(filepath.Join(state, "nope")); !errors.Is(err, ErrTokenFile) {
		t.Errorf("missing file: %v", err)
	}
}
