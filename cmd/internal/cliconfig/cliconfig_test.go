package cliconfig_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/host/supervisor"
)

// unset removes key for the test (restored after it).
func unset(t *testing.T, key string) {
	t.Helper()
	t.Setenv(key, "")
	if err := os.Unsetenv(key); err != nil {
		t.Fatal(err)
	}
}

func TestStateDir(t *testing.T) {
	tmp := t.TempDir()
	tests := []struct {
		name    string
		flag    string
		env     map[string]string // "" values are set but empty
		unset   []string
		want    string
		wantErr error
	}{
		{name: "flag wins", flag: filepath.Join(tmp, "flag"), env: map[string]string{cliconfig.EnvStateDir: filepath.Join(tmp, "env")}, want: filepath.Join(tmp, "flag")},
		{name: "flag wins over an empty variable", flag: filepath.Join(tmp, "flag"), env: map[string]string{cliconfig.EnvStateDir: ""}, want: filepath.Join(tmp, "flag")},
		{name: "variable", env: map[string]string{cliconfig.EnvStateDir: filepath.Join(tmp, "env"), "XDG_STATE_HOME": tmp}, want: filepath.Join(tmp, "env")},
		{name: "set but empty is an error", env: map[string]string{cliconfig.EnvStateDir: ""}, wantErr: statedir.ErrInvalid},
		{name: "xdg", unset: []string{cliconfig.EnvStateDir}, env: map[string]string{"XDG_STATE_HOME": filepath.Join(tmp, "xdg")}, want: filepath.Join(tmp, "xdg", "palyra")},
		{name: "home", unset: []string{cliconfig.EnvStateDir}, env: map[string]string{"XDG_STATE_HOME": "", "HOME": filepath.Join(tmp, "home")}, want: filepath.Join(tmp, "home", ".local", "state", "palyra")},
		{name: "no home", unset: []string{cliconfig.EnvStateDir, "XDG_STATE_HOME", "HOME"}, wantErr: statedir.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range tt.unset {
				unset(t, k)
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			got, err := cliconfig.StateDir(tt.flag)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("StateDir() = %q, %v; want %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("StateDir() = %q, %v; want %q", got, err, tt.want)
			}
			if l, err := cliconfig.Layout(tt.flag); err != nil || l.Dir() != tt.want {
				t.Fatalf("Layout() = %q, %v", l.Dir(), err)
			}
		})
	}
}

func TestTrustStore(t *testing.T) {
	tmp := t.TempDir()
	l := statedir.At(filepath.Join(tmp, "state"))
	tests := []struct {
		name    string
		flag    string
		env     *string
		want    string
		wantErr bool
	}{
		{name: "default", want: l.TrustStore()},
		{name: "variable", env: ptr(filepath.Join(tmp, "env.json")), want: filepath.Join(tmp, "env.json")},
		{name: "flag wins", flag: filepath.Join(tmp, "flag.json"), env: ptr(filepath.Join(tmp, "env.json")), want: filepath.Join(tmp, "flag.json")},
		{name: "set but empty is an error", env: ptr(""), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unset(t, cliconfig.EnvTrustStore)
			if tt.env != nil {
				t.Setenv(cliconfig.EnvTrustStore, *tt.env)
			}
			got, err := cliconfig.TrustStore(l, tt.flag)
			if tt.wantErr {
				if !errors.Is(err, statedir.ErrInvalid) {
					t.Fatalf("TrustStore() = %q, %v; want ErrInvalid", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("TrustStore() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestSidecar(t *testing.T) {
	tmp := t.TempDir()
	exe := func(dir string) string {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "palyra-sidecar")
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	flagBin, envBin, pathBin := exe(filepath.Join(tmp, "flag")), exe(filepath.Join(tmp, "env")), exe(filepath.Join(tmp, "path"))
	notExec := filepath.Join(tmp, "plain")
	if err := os.WriteFile(notExec, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		flag, env string
		path      string
		want      string
		wantErr   bool
	}{
		{name: "flag", flag: flagBin, env: envBin, path: filepath.Dir(pathBin), want: flagBin},
		{name: "variable", env: envBin, path: filepath.Dir(pathBin), want: envBin},
		{name: "PATH", path: filepath.Dir(pathBin), want: pathBin},
		{name: "flag not executable", flag: notExec, env: envBin, wantErr: true},
		{name: "variable not executable", env: notExec, path: filepath.Dir(pathBin), wantErr: true},
		{name: "nowhere", path: filepath.Join(tmp, "empty"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(cliconfig.EnvSidecar, tt.env)
			t.Setenv("PATH", tt.path)
			got, err := cliconfig.Sidecar(tt.flag)
			if tt.wantErr {
				if !errors.Is(err, supervisor.ErrSidecarNotFound) {
					t.Fatalf("Sidecar() = %q, %v; want ErrSidecarNotFound", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Sidecar() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestPlainVariables(t *testing.T) {
	t.Setenv(cliconfig.EnvDaemonURL, "http://127.0.0.1:1")
	t.Setenv(cliconfig.EnvAdminToken, "palyra_env_token")
	t.Setenv(cliconfig.EnvVaultKey, "a2V5")
	t.Setenv(cliconfig.EnvVaultKeyCommand, "printf key")
	if got := cliconfig.DaemonURL(""); got != "http://127.0.0.1:1" {
		t.Errorf("DaemonURL(\"\") = %q", got)
	}
	if got := cliconfig.DaemonURL("http://127.0.0.1:2"); got != "http://127.0.0.1:2" {
		t.Errorf("DaemonURL(flag) = %q", got)
	}
	if got := cliconfig.AdminToken(""); got != "palyra_env_token" {
		t.Errorf("AdminToken(\"\") = %q", got)
	}
	if got := cliconfig.AdminToken("palyra_flag"); got != "palyra_flag" {
		t.Errorf("AdminToken(flag) = %q", got)
	}
	if k, c := cliconfig.VaultKey(); k != "a2V5" || c != "printf key" {
		t.Errorf("VaultKey() = %q, %q", k, c)
	}
}

func ptr(s string) *string { return &s }
