package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
		want   *regexp.Regexp // matches the error
		logged string         // in the sidecar's log (carried by the supervisor's), "" for nothing
	}{
		{name: "announces a key it does not serve with",
			script: fmt.Sprintf("printf '%%s\\n' '%s%s'\n%q \"$@\" | %s\n", sidecarplugin.ServerKeyLinePrefix, otherKey, binPath, dropFirstLine),
			want:   regexp.MustCompile(`does not carry the key announced`)},
		{name: "pins another supervisor key",
			script: fmt.Sprintf("%s=%s exec %q \"$@\"\n", sidecarplugin.ClientKeyEnv, otherKey, binPath),
			// In TLS 1.3 the client's handshake ends before the server has
			// checked the client's certificate, so the supervisor sees
			// either the sidecar's alert or, when its first write beats
			// the alert, the connection the sidecar closed. Either way the
			// failure is load_skill's connection, after the handshake line.
			// The sidecar's log says why, whichever the supervisor saw.
			want:   regexp.MustCompile(`load_skill: rpc error: code = Unavailable .*(bad certificate|broken pipe|connection reset by peer)`),
			logged: "refused a TLS peer"},
		{name: "announces no key",
			script: fmt.Sprintf("%q \"$@\" | %s\n", binPath, dropFirstLine),
			want:   regexp.MustCompile(`is not a TLS key line`)},
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
			log, buf := capture()
			s := newSup(t, Config{SidecarPath: path, SpareSidecars: -1, Standby: -1, HealthInterval: -1, IdleTimeout: -1,
				StartTimeout: 20 * time.Second, Logger: log})
			began := time.Now()
			_, err := s.Call(ctxT(t), tg, "t", nil, CallOptions{})
			if !errors.Is(err, ErrSidecarStart) || !tt.want.MatchString(fmt.Sprint(err)) {
				t.Fatalf("call through the impostor: %v; want %v matching %q", err, ErrSidecarStart, tt.want)
			}
			if d := time.Since(began); d > 10*time.Second {
				t.Errorf("the refusal took %v", d)
			}
			if tt.logged != "" {
				// The sidecar's stderr reaches the log asynchronously.
				for deadline := time.Now().Add(5 * time.Second); len(buf.lines(tt.logged, "does not carry the key announced")) == 0; {
					if time.Now().After(deadline) {
						t.Fatalf("the log has no line with %q and the pin's error:\n%s", tt.logged, buf.String())
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			t.Logf("refused: %v", err)
		})
	}
}
