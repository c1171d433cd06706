package supervisor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// modeFile writes a module file whose content tells the fake sidecar what
// to do in precompile.
func modeFile(t *testing.T, mode string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), mode+".wasm")
	if err := os.WriteFile(p, []byte(mode), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPrecompile(t *testing.T) {
	echo := fixture(t, "pc.echo", "echo.wasm")
	tests := []struct {
		name    string
		sidecar string
		module  string
		sha     string
		timeout time.Duration
		check   func(t *testing.T, err error, cache string)
	}{
		{
			name: "compiles into the cache", sidecar: binPath, module: echo.ModulePath, sha: echo.ModuleSHA256,
			check: func(t *testing.T, err error, cache string) {
				if err != nil {
					t.Fatal(err)
				}
				if entries, _ := os.ReadDir(cache); len(entries) == 0 {
					t.Error("nothing in the cache")
				}
			},
		},
		{
			name: "the sidecar's failure keeps its code", sidecar: binPath, module: echo.ModulePath, sha: strings.Repeat("0", 64),
			check: func(t *testing.T, err error, _ string) {
				if err == nil || !strings.HasPrefix(err.Error(), "module_hash_mismatch: ") {
					t.Errorf("err = %v", err)
				}
			},
		},
		{
			name: "a reported failure is code: message", sidecar: fakePath, module: "fail",
			check: func(t *testing.T, err error, _ string) {
				if err == nil || err.Error() != "compile_failed: boom" {
					t.Errorf("err = %v", err)
				}
			},
		},
		{
			name: "stderr is capped", sidecar: fakePath, module: "flood",
			check: func(t *testing.T, err error, _ string) {
				const prefix = "palyra-sidecar precompile: exit status 3: "
				if err == nil || !strings.HasPrefix(err.Error(), prefix) {
					t.Fatalf("err = %v", err)
				}
				if n := len(err.Error()) - len(prefix); n != maxPrecompileStderr {
					t.Errorf("quoted %d bytes of stderr, want %d", n, maxPrecompileStderr)
				}
			},
		},
		{
			name: "output that is not JSON", sidecar: fakePath, module: "garbage",
			check: func(t *testing.T, err error, _ string) {
				if err == nil || !strings.HasPrefix(err.Error(), "palyra-sidecar precompile: bad output: ") {
					t.Errorf("err = %v", err)
				}
			},
		},
		{
			name: "bounded by PrecompileTimeout", sidecar: fakePath, module: "block", timeout: 200 * time.Millisecond,
			check: func(t *testing.T, err error, _ string) {
				if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "palyra-sidecar precompile: ") {
					t.Errorf("err = %v", err)
				}
			},
		},
		{
			name: "a missing binary", sidecar: "", module: "fail",
			check: func(t *testing.T, err error, _ string) {
				if err == nil || !strings.Contains(err.Error(), "palyra-sidecar precompile: fork/exec ") {
					t.Errorf("err = %v", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			module := tt.module
			if !filepath.IsAbs(module) {
				module = modeFile(t, module)
			}
			sidecar := tt.sidecar
			if sidecar == "" {
				// New checks the binary; remove it after.
				sidecar = filepath.Join(t.TempDir(), "palyra-sidecar")
				if err := os.WriteFile(sidecar, nil, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cache := filepath.Join(shortDir(t), "cache")
			s := newSup(t, Config{SidecarPath: sidecar, CacheDir: cache, PrecompileTimeout: tt.timeout, HealthInterval: -1, IdleTimeout: -1})
			if tt.sidecar == "" {
				os.Remove(sidecar)
			}
			err := s.Precompile(ctxT(t), module, tt.sha)
			tt.check(t, err, cache)
			if left := sidecarChildren(); len(left) > 0 {
				t.Errorf("children left after Precompile: %v", left)
			}
			if entries, _ := os.ReadDir(s.cfg.SocketDir); len(entries) > 0 {
				t.Errorf("private dirs left after Precompile: %v", entries)
			}
		})
	}
}

// TestPrecompileEndsWithClose closes the supervisor while a precompile
// child runs: the child is killed and Precompile reports ErrClosed.
func TestPrecompileEndsWithClose(t *testing.T) {
	s := newSup(t, Config{SidecarPath: fakePath, CacheDir: shortDir(t), HealthInterval: -1, IdleTimeout: -1})
	errc := make(chan error, 1)
	go func() { errc <- s.Precompile(ctxT(t), modeFile(t, "block"), "") }()
	pid := waitChild(t, fakePath)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("Precompile across Close: %v", err)
	}
	if alive(pid) {
		t.Errorf("precompile child %d alive after Close", pid)
	}
	if err := s.Precompile(ctxT(t), modeFile(t, "fail"), ""); !errors.Is(err, ErrClosed) {
		t.Errorf("Precompile after Close: %v", err)
	}
}

func randomSecret(t *testing.T) string {
	t.Helper()
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// environ reads a live process's environment. A process caught in its
// exec has an empty one for a moment: it is read again until it is not.
func environ(t *testing.T, pid int) []byte {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			t.Fatalf("environment of pid %d: %v", pid, err)
		}
		if len(env) > 0 {
			return env
		}
		if time.Now().After(deadline) {
			t.Fatalf("environment of pid %d stayed empty", pid)
		}
	}
}

// TestChildEnvironment starts a serving sidecar and a precompile child
// while the host's environment holds secrets: neither child has them, and
// both have the Go runtime settings and their private TMPDIR.
func TestChildEnvironment(t *testing.T) {
	vaultKey, awsKey := randomSecret(t), randomSecret(t)
	t.Setenv("PALYRA_VAULT_KEY", vaultKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", awsKey)
	t.Setenv("GOGC", "150")
	check := func(t *testing.T, what string, env []byte, sockRoot string) {
		t.Helper()
		if bytes.Contains(env, []byte(vaultKey)) || bytes.Contains(env, []byte(awsKey)) {
			t.Fatalf("the %s inherited a secret: %q", what, env)
		}
		vars := strings.Split(string(env), "\x00")
		if !slices.Contains(vars, "GOGC=150") {
			t.Errorf("the %s lacks GOGC: %q", what, vars)
		}
		if tmp := varValue(vars, "TMPDIR"); filepath.Dir(tmp) != sockRoot {
			t.Errorf("the %s's TMPDIR is %q, want a private dir in %s", what, tmp, sockRoot)
		}
	}

	t.Run("serving sidecar", func(t *testing.T) {
		s := newSup(t, Config{HealthInterval: -1})
		tg := fixture(t, "env.answer", "answer.wasm")
		tg.Entrypoint = "answer"
		if err := s.Start(ctxT(t), tg); err != nil {
			t.Fatal(err)
		}
		env := environ(t, s.State(tg.SkillID, tg.Version).PID)
		check(t, "serving sidecar", env, s.cfg.SocketDir)
		vars := strings.Split(string(env), "\x00")
		if dir := varValue(vars, "PLUGIN_UNIX_SOCKET_DIR"); filepath.Dir(dir) != varValue(vars, "TMPDIR") {
			t.Errorf("socket dir %q is not in the private dir %q", dir, varValue(vars, "TMPDIR"))
		}
	})

	t.Run("precompile child", func(t *testing.T) {
		s := newSup(t, Config{SidecarPath: fakePath, CacheDir: shortDir(t), HealthInterval: -1, IdleTimeout: -1})
		errc := make(chan error, 1)
		mode := modeFile(t, "block")
		go func() { errc <- s.Precompile(ctxT(t), mode, "") }()
		pid := waitChild(t, fakePath)
		env := environ(t, pid)
		// A SIGUSR1 sent before the fake listens would be lost.
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(mode + ".ready"); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the fake precompile child never said it listens for SIGUSR1")
			}
		}
		// Let it finish: the fake succeeds on SIGUSR1.
		if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("Precompile: %v", err)
		}
		check(t, "precompile child", env, s.cfg.SocketDir)
		tmp := varValue(strings.Split(string(env), "\x00"), "TMPDIR")
		if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the precompile child's private dir outlived it: %v", err)
		}
	})
}

func varValue(vars []string, k string) string {
	for _, v := range vars {
		if val, ok := strings.CutPrefix(v, k+"="); ok {
			return val
		}
	}
	return ""
}

// TestNoMemoryPoolReachesBothChildren: Config.NoMemoryPool is given to the
// precompile child and to the serving sidecar alike, so the sidecar finds
// the entry the child made (the setting is part of the cache key); and the
// two settings make different entries.
func TestNoMemoryPoolReachesBothChildren(t *testing.T) {
	entries := map[bool][]string{}
	for _, noPool := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoMemoryPool=%v", noPool), func(t *testing.T) {
			cache := shortDir(t)
			s := newSup(t, Config{CacheDir: cache, NoMemoryPool: noPool})
			tg := fixture(t, "pool.echo", "echo.wasm")
			if err := s.Precompile(ctxT(t), tg.ModulePath, tg.ModuleSHA256); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Call(ctxT(t), tg, "t", []byte(`{}`), CallOptions{}); err != nil {
				t.Fatal(err)
			}
			if st := s.State(tg.SkillID, tg.Version); !st.CacheHit {
				t.Errorf("the sidecar missed the precompiled entry: %+v", st)
			}
			des, err := os.ReadDir(cache)
			if err != nil {
				t.Fatal(err)
			}
			for _, de := range des {
				entries[noPool] = append(entries[noPool], de.Name())
			}
		})
	}
	if len(entries[false]) == 0 || slices.Equal(entries[false], entries[true]) {
		t.Errorf("the same cache entries with and without the pool: %v", entries)
	}
}
