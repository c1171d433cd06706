package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/host/vault"
)

// clearVaultEnv makes the tests use the key file, whatever the machine's
// environment holds (an empty value is an unset one).
func clearVaultEnv(t *testing.T) {
	t.Helper()
	t.Setenv(cliconfig.EnvVaultKey, "")
	t.Setenv(cliconfig.EnvVaultKeyCommand, "")
}

// noValue fails when any output of r shows value.
func (r result) noValue(t *testing.T, value string) {
	t.Helper()
	if strings.Contains(r.stdout, value) || strings.Contains(r.stderr, value) {
		t.Fatalf("output shows the secret value\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
}

func vaultGet(t *testing.T, state, name string) string {
	t.Helper()
	v, err := vault.Open(vault.Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Get(t.Context(), vault.MustParseName(name))
	if err != nil {
		t.Fatalf("vault Get %s: %v", name, err)
	}
	return string(got)
}

func TestSecretsSetListDelete(t *testing.T) {
	clearVaultEnv(t)
	state := t.TempDir()
	const name, value = "skill:acme.echo_http/api_token", "sk-cli-Secret-4242"

	r := cli(t, state, value+"\n", "secrets", "set", name)
	if r.code != exitOK || r.stdout != "secret "+name+" set\n" {
		t.Fatalf("set: exit %d\nstdout: %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r.noValue(t, value)
	if got := vaultGet(t, state, name); got != value {
		t.Fatalf("stored %q, want %q (one trailing newline stripped)", got, value)
	}

	var set secretReport
	r = cli(t, state, value+"\r\n", "--json", "secrets", "set", "principal:admin:ops/api_token")
	r.noValue(t, value)
	r.decode(t, &set)
	if set.Name != "principal:admin:ops/api_token" || set.Scope != "principal:admin:ops" || set.Key != "api_token" || set.UpdatedAt == "" {
		t.Fatalf("set report = %+v", set)
	}
	if strings.Contains(r.stdout, `"value"`) || strings.Contains(r.stdout, "length") {
		t.Fatalf("set report mentions the value: %s", r.stdout)
	}

	r = cli(t, state, "multi\nline\n\n", "secrets", "set", "--keep-newline", "global/pem")
	if r.code != exitOK {
		t.Fatalf("set --keep-newline: exit %d %s", r.code, r.stderr)
	}
	if got := vaultGet(t, state, "global/pem"); got != "multi\nline\n\n" {
		t.Fatalf("--keep-newline stored %q", got)
	}

	r = cli(t, state, "", "secrets", "list")
	r.noValue(t, value)
	if !strings.HasPrefix(r.stdout, "NAME ") || !strings.Contains(r.stdout, " UPDATED\n") {
		t.Errorf("list is not a table with a header:\n%s", r.stdout)
	}
	for _, n := range []string{name, "principal:admin:ops/api_token", "global/pem"} {
		if !strings.Contains(r.stdout, "\n"+n+"  ") {
			t.Errorf("list does not show %s on a row of its own:\n%s", n, r.stdout)
		}
	}
	var list []secretReport
	r = cli(t, state, "", "--json", "secrets", "list")
	r.noValue(t, value)
	r.decode(t, &list)
	if len(list) != 3 || list[0].Name != "global/pem" || list[2].Name != name || list[2].UpdatedAt == "" {
		t.Fatalf("list --json = %+v", list)
	}

	r = cli(t, state, "", "secrets", "delete", name)
	if r.code != exitOK || r.stdout != "secret "+name+" deleted\n" {
		t.Fatalf("delete: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, state, "", "--json", "secrets", "delete", name)
	if r.code != exitFailure || r.errorCode(t) != "secret_not_found" {
		t.Fatalf("second delete: exit %d %s", r.code, r.stdout)
	}
	r = cli(t, state, "", "--json", "secrets", "list")
	r.decode(t, &list)
	if len(list) != 2 {
		t.Fatalf("list after delete = %+v", list)
	}
}

func TestSecretsSetRefusals(t *testing.T) {
	clearVaultEnv(t)
	const value = "sk-argv-Secret-777"
	tests := []struct {
		name  string
		stdin string
		args  []string
		exit  int
		code  string
		text  string
	}{
		{"value in argv", "", []string{"secrets", "set", "global/k", value}, exitUsage, "usage", "pipe it on stdin"},
		{"value in argv with stdin", value, []string{"secrets", "set", "global/k", value}, exitUsage, "usage", "never taken from the command line"},
		{"no name", value, []string{"secrets", "set"}, exitUsage, "usage", "pipe the value on stdin"},
		{"empty stdin", "", []string{"secrets", "set", "global/k"}, exitFailure, "vault_value_empty", "stdin was empty"},
		{"only a newline", "\n", []string{"secrets", "set", "global/k"}, exitFailure, "vault_value_empty", "stdin was empty"},
		{"bad scope", value, []string{"secrets", "set", "user:x/k"}, exitFailure, "vault_invalid_name", "scope"},
		{"value as the name", "", []string{"secrets", "set", value}, exitFailure, "vault_invalid_name", "<scope>/<key>"},
		{"too large", strings.Repeat("v", vault.MaxSecretBytes+3), []string{"secrets", "set", "global/k"}, exitFailure, "vault_value_too_large", "65536-byte limit"},
		{"largest with newline", strings.Repeat("v", vault.MaxSecretBytes) + "\r\n", []string{"secrets", "set", "global/big"}, exitOK, "", ""},
		{"one over", strings.Repeat("v", vault.MaxSecretBytes+1), []string{"secrets", "set", "global/k"}, exitFailure, "vault_value_too_large", "65537 bytes"},
		{"delete bad name", "", []string{"secrets", "delete", "global"}, exitFailure, "vault_invalid_name", "no '/'"},
		{"delete two names", "", []string{"secrets", "delete", "global/a", "global/b"}, exitUsage, "usage", "takes 1 argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			r := cli(t, state, tt.stdin, append([]string{"--json"}, tt.args...)...)
			r.noValue(t, value)
			if r.code != tt.exit {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tt.exit, r.stdout, r.stderr)
			}
			if tt.exit == exitOK {
				return
			}
			if got := r.errorCode(t); got != tt.code {
				t.Fatalf("code %q, want %q: %s", got, tt.code, r.stdout)
			}
			if !strings.Contains(r.stdout, tt.text) {
				t.Fatalf("error lacks %q: %s", tt.text, r.stdout)
			}
			if _, err := os.Stat(filepath.Join(state, "secrets", "vault.json")); err == nil {
				t.Fatal("a refused set wrote the vault")
			}
		})
	}
}

// TestSecretsSetRefusesTerminal gives set a character device on stdin, as
// a terminal is: it must refuse rather than read a value that echoes.
func TestSecretsSetRefusesTerminal(t *testing.T) {
	clearVaultEnv(t)
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--state-dir", t.TempDir(), "secrets", "set", "global/k"}, f, &out, &errb)
	if code != exitUsage || !strings.Contains(errb.String(), "pipe the value on stdin") || !strings.Contains(errb.String(), "[usage]") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
}

// TestSecretsStateDirFromEnv resolves the state directory from
// $PALYRA_STATE_DIR and the key from $PALYRA_VAULT_KEY, as every command
// does.
func TestSecretsStateDirFromEnv(t *testing.T) {
	clearVaultEnv(t)
	state := t.TempDir()
	t.Setenv(cliconfig.EnvStateDir, state)
	key := bytes.Repeat([]byte{0x42}, vault.KeyBytes)
	t.Setenv(cliconfig.EnvVaultKey, base64.StdEncoding.EncodeToString(key))
	const value = "env-dir-Secret-1"
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"secrets", "set", "channel:discord:acct_1/bot_token"}, strings.NewReader(value), &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	v, err := vault.Open(vault.Config{StateDir: state, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Get(t.Context(), vault.MustParseName("channel:discord:acct_1/bot_token"))
	if err != nil || string(got) != value {
		t.Fatalf("Get = %q, %v", got, err)
	}
	if _, err := os.Stat(v.KeyPath()); err == nil {
		t.Fatal("a key file was written although $PALYRA_VAULT_KEY is set")
	}
	// Another key is refused with its code.
	t.Setenv(cliconfig.EnvVaultKey, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x43}, vault.KeyBytes)))
	r := cli(t, state, value, "--json", "secrets", "set", "global/other")
	r.noValue(t, value)
	if r.code != exitFailure || r.errorCode(t) != "vault_key_mismatch" {
		t.Fatalf("set with another key: exit %d %s", r.code, r.stdout)
	}
}
