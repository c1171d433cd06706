package statedir_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/statedir"
)

func TestResolve(t *testing.T) {
	tmp := t.TempDir()
	tests := []struct {
		name     string
		explicit string
		env      map[string]string
		want     string
		wantErr  bool
	}{
		{name: "explicit wins", explicit: filepath.Join(tmp, "a"), env: map[string]string{statedir.EnvStateDir: filepath.Join(tmp, "b")}, want: filepath.Join(tmp, "a")},
		{name: "env", env: map[string]string{statedir.EnvStateDir: filepath.Join(tmp, "b")}, want: filepath.Join(tmp, "b")},
		{name: "env empty is an error", env: map[string]string{statedir.EnvStateDir: ""}, wantErr: true},
		{name: "xdg default", env: map[string]string{"XDG_STATE_HOME": filepath.Join(tmp, "xdg")}, want: filepath.Join(tmp, "xdg", "palyra")},
		{name: "home default", env: map[string]string{"XDG_STATE_HOME": "", "HOME": filepath.Join(tmp, "home")}, want: filepath.Join(tmp, "home", ".local", "state", "palyra")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(statedir.EnvStateDir, "")
			unsetenv(t, statedir.EnvStateDir)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			got, err := statedir.Resolve(tt.explicit)
			if tt.wantErr {
				if !errors.Is(err, statedir.ErrInvalid) {
					t.Fatalf("Resolve() error = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Resolve() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestTrustStorePath(t *testing.T) {
	state := t.TempDir()
	unsetenv(t, statedir.EnvTrustStore)
	got, err := statedir.TrustStorePath(state, "")
	if err != nil || got != filepath.Join(state, "skills", "trust-store.json") {
		t.Fatalf("default = %q, %v", got, err)
	}
	t.Setenv(statedir.EnvTrustStore, filepath.Join(state, "t.json"))
	if got, _ := statedir.TrustStorePath(state, ""); got != filepath.Join(state, "t.json") {
		t.Fatalf("env = %q", got)
	}
	if got, _ := statedir.TrustStorePath(state, filepath.Join(state, "x.json")); got != filepath.Join(state, "x.json") {
		t.Fatalf("explicit = %q", got)
	}
	t.Setenv(statedir.EnvTrustStore, "")
	if _, err := statedir.TrustStorePath(state, ""); !errors.Is(err, statedir.ErrInvalid) {
		t.Fatalf("empty env error = %v", err)
	}
}
