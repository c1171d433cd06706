package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// TestSidecarTLSPinned starts impostors of palyra-sidecar (a script around
// the real one) and checks that the supervisor refuses each: a TLS peer
// whose key is not the one announced on the sidecar's stdout, a sidecar
// that pins another supervisor key, and one that announces no key. Each
// start fails, promptly, as sidecar_start_failed.
func TestSidecarTLSPinned(t *testing.T) {
	other, err := sidecarplugin.NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	otherKey := sidecarplugin.EncodeKey(other.PublicKey)
	// cat passes each line on as it comes (tail would hold them back).
	const dropFirstLine = "{ read -r _; exec cat; }"
	tests := []struct {
		name   string
		script string
		want   string // in the error, "" for any
	}{
		{name: "announces a key it does not serve with",
			script: fmt.Sprintf("printf '%%s\\n' '%s%s'\n%q \"$@\" | %s\n", sidecarplugin.ServerKeyLinePrefix, otherKey, binPath, dropFirstLine),
			want:   "does not carry the key announced"},
		{name: "pins another supervisor key",
			script: fmt.Sprintf("%s=%s exec %q \"$@\"\n", sidecarplugin.ClientKeyEnv, otherKey, binPath),
			want:   "bad certificate"}, // the sidecar's TLS alert
		{name: "announces no key",
			script: fmt.Sprintf("%q \"$@\" | %s\n", binPath, dropFirstLine),
			want:   "is not a TLS key line"},
	}
	tg := fixture(t, "tls.pinned", "answer.wasm")
	tg.Entrypoint = "answer"
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The name starts like the real binary's, so that the tests'
			// leftover-process checks count it.
			path := filepath.Join(t.TempDir(), fmt.Sprintf("palyra-sidecar-impostor%d", i))
			if err := os.WriteFile(path, []byte("#!/bin/sh\n"+tt.script), 0o755); err != nil {
				t.Fatal(err)
			}
			s := newSup(t, Config{SidecarPath: path, SpareSidecars: -1, Standby: -1, HealthInterval: -1, IdleTimeout: -1,
				StartTimeout: 20 * time.Second})
			began := time.Now()
			_, err := s.Call(ctxT(t), tg, "t", nil, CallOptions{})
			if !errors.Is(err, ErrSidecarStart) || !strings.Contains(fmt.Sprint(err), tt.want) {
				t.Fatalf("call through the impostor: %v; want %v containing %q", err, ErrSidecarStart, tt.want)
			}
			if d := time.Since(began); d > 10*time.Second {
				t.Errorf("the refusal took %v", d)
			}
			t.Logf("refused: %v", err)
		})
	}
}
