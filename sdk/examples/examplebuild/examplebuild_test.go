package examplebuild_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// allowedImports are the functions sdk/ABI.md §2 lets a module import, with
// their signatures; "" accepts the wasi_snapshot_preview1 signature as the
// Go toolchain declares it.
var allowedImports = map[string]map[string]string{
	"palyra:skills/host@1": {
		"input-len":       "()->(i32)",
		"input-read":      "(i32,i32)->(i32)",
		"output-write":    "(i32,i32)->(i32)",
		"log":             "(i32,i32,i32)->()",
		"capability-call": "(i32,i32,i32)->(i32)",
		"response-len":    "()->(i32)",
		"response-read":   "(i32,i32)->(i32)",
	},
	"palyra:plugins/host-capabilities@0.1.0": {
		"http-count": "()->(i32)", "http-handle": "(i32)->(i32)",
		"secret-count": "()->(i32)", "secret-handle": "(i32)->(i32)",
		"storage-count": "()->(i32)", "storage-handle": "(i32)->(i32)",
		"channel-count": "()->(i32)", "channel-handle": "(i32)->(i32)",
	},
	"wasi_snapshot_preview1": {
		"args_sizes_get": "", "args_get": "", "environ_sizes_get": "", "environ_get": "",
		"clock_time_get": "", "clock_res_get": "", "random_get": "", "fd_write": "",
		"fd_close": "", "fd_fdstat_get": "", "fd_fdstat_set_flags": "", "fd_prestat_get": "",
		"fd_prestat_dir_name": "", "fd_read": "", "fd_seek": "", "sched_yield": "",
		"poll_oneoff": "", "proc_exit": "",
	},
}

func TestNames(t *testing.T) {
	root, err := examplebuild.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(root, "sdk", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root, "sdk", "examples", e.Name(), "skill.toml")); err == nil {
			dirs = append(dirs, e.Name())
		}
	}
	if got := examplebuild.Names(); !slices.Equal(got, dirs) {
		t.Fatalf("Names() = %v, example directories with a skill.toml = %v", got, dirs)
	}
	if _, err := examplebuild.Dir("../echo"); !errors.Is(err, examplebuild.ErrUnknownExample) {
		t.Fatalf("Dir(../echo) = %v", err)
	}
	if _, err := examplebuild.Build(context.Background(), "nope", t.TempDir()); !errors.Is(err, examplebuild.ErrUnknownExample) {
		t.Fatalf("Build(nope) = %v", err)
	}
}

// TestExamples builds every example and checks the module's shape against
// sdk/ABI.md §1 and §2.
func TestExamples(t *testing.T) {
	for _, name := range examplebuild.Names() {
		t.Run(name, func(t *testing.T) {
			p := examplebuild.MustBuild(t, name)
			if filepath.Base(p) != name+".wasm" {
				t.Errorf("path %s", p)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d bytes", name, len(b))
			m, err := parseWasm(b)
			if err != nil {
				t.Fatal(err)
			}
			exports := map[string]string{}
			for _, e := range m.exports {
				exports[e.name] = map[byte]string{0: "func ", 1: "table", 2: "memory", 3: "global"}[e.kind] + e.sig
			}
			for exp, want := range map[string]string{
				"palyra_plugin_main": "func ()->(i32)",
				"_initialize":        "func ()->()",
				"memory":             "memory",
			} {
				if exports[exp] != want {
					t.Errorf("export %s = %q, want %q", exp, exports[exp], want)
				}
			}
			if _, ok := exports["_start"]; ok {
				t.Error("exports _start: built as a command, not a reactor")
			}
			seen := map[string]bool{}
			for _, im := range m.imports {
				sigs, ok := allowedImports[im.module]
				want, listed := sigs[im.name]
				switch {
				case !ok || !listed:
					t.Errorf("import %s.%s is not allowed by ABI.md", im.module, im.name)
				case im.kind != 0:
					t.Errorf("import %s.%s is not a function", im.module, im.name)
				case want != "" && im.sig != want:
					t.Errorf("import %s.%s has signature %s, want %s", im.module, im.name, im.sig, want)
				}
				seen[im.module+"."+im.name] = true
			}
			for _, need := range []string{"input-len", "input-read", "output-write"} {
				if !seen["palyra:skills/host@1."+need] {
					t.Errorf("does not import palyra:skills/host@1.%s", need)
				}
			}
		})
	}
}

func TestMustBuildCaches(t *testing.T) {
	p1 := examplebuild.MustBuild(t, "echo")
	p2 := examplebuild.MustBuild(t, "echo")
	if p1 != p2 {
		t.Fatalf("paths differ: %s %s", p1, p2)
	}
	key, err := examplebuild.SourceKey("echo")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p1, key[:32]) {
		t.Fatalf("cache path %s does not carry the source key %s", p1, key[:32])
	}
	other, err := examplebuild.SourceKey("report")
	if err != nil || other == key {
		t.Fatalf("report key %s, echo key %s, err %v", other, key, err)
	}
}

func TestBuildCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	if _, err := examplebuild.Build(ctx, "echo", dir); err == nil {
		t.Fatal("Build with a cancelled context succeeded")
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Fatalf("left behind %v", left)
	}
}
