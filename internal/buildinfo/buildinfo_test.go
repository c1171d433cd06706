package buildinfo

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/sdk/abi"
)

func TestFromBuildInfo(t *testing.T) {
	wasmDep := &debug.Module{Path: WasmtimeModule + "/v25", Version: "v25.0.0"}
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "github.com/palyra-go/palyra", Version: "(devel)"},
		Deps:      []*debug.Module{{Path: "github.com/spf13/cobra", Version: "v1.8.0"}, wasmDep},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-27T06:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	installed := &debug.BuildInfo{
		GoVersion: "go1.26.1",
		Main:      debug.Module{Path: "github.com/palyra-go/palyra", Version: "v0.3.0"},
		Deps: []*debug.Module{{Path: WasmtimeModule + "/v25", Version: "v25.0.0",
			Replace: &debug.Module{Path: "../wasmtime-go", Version: "v25.0.1"}}},
	}
	tests := []struct {
		name                string
		bi                  *debug.BuildInfo
		ldVersion, ldCommit string
		want                Info
	}{
		{name: "no build info", want: Info{Version: Devel, Commit: Unknown, GoVersion: runtime.Version(), WasmtimeGo: WasmtimeGoRequired}},
		{name: "vcs stamp", bi: stamped, want: Info{
			Version: Devel, Commit: "0123456789abcdef0123456789abcdef01234567", CommitTime: "2026-11-27T06:00:00Z",
			Modified: true, GoVersion: "go1.26.0", WasmtimeGo: "v25.0.0", WasmtimeLinked: true, LinkerGCSections: GCSectionsOff,
		}},
		{name: "go install at a version, replaced wasmtime", bi: installed, want: Info{
			Version: "v0.3.0", Commit: Unknown, GoVersion: "go1.26.1", WasmtimeGo: "v25.0.1", WasmtimeLinked: true, LinkerGCSections: GCSectionsOff,
		}},
		{name: "ldflags win", bi: stamped, ldVersion: "v1.0.0", ldCommit: "feedface", want: Info{
			Version: "v1.0.0", Commit: "feedface", GoVersion: "go1.26.0", WasmtimeGo: "v25.0.0", WasmtimeLinked: true, LinkerGCSections: GCSectionsOff,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fromBuildInfo("palyra", tt.bi, tt.ldVersion, tt.ldCommit)
			want := tt.want
			want.Program, want.ABI, want.SidecarProtocol = "palyra", abi.Version, 1
			want.Platform = runtime.GOOS + "/" + runtime.GOARCH
			if got != want {
				t.Fatalf("fromBuildInfo:\n got %#v\nwant %#v", got, want)
			}
		})
	}
}

func TestLinkerGCSections(t *testing.T) {
	tests := []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{name: "no flags", settings: []debug.BuildSetting{{Key: "-compiler", Value: "gc"}}, want: GCSectionsOff},
		{name: "SidecarLDFlags", settings: []debug.BuildSetting{{Key: "-ldflags", Value: SidecarLDFlags}}, want: GCSectionsOn},
		{name: "with -X and quoted extldflags", settings: []debug.BuildSetting{
			{Key: "-ldflags", Value: `-X main.v=1 -extldflags "-Wl,-O1,--gc-sections -s"`}}, want: GCSectionsOn},
		{name: "CGO_LDFLAGS", settings: []debug.BuildSetting{{Key: "CGO_LDFLAGS", Value: "-g -O2 -Wl,--gc-sections"}}, want: GCSectionsOn},
		{name: "turned off again", settings: []debug.BuildSetting{{Key: "-ldflags", Value: "-extldflags '-Wl,--gc-sections -Wl,--no-gc-sections'"}}, want: GCSectionsOff},
		{name: "ldflags come after CGO_LDFLAGS", settings: []debug.BuildSetting{
			{Key: "-ldflags", Value: "-extldflags=-Wl,--no-gc-sections"}, {Key: "CGO_LDFLAGS", Value: "-Wl,--gc-sections"}}, want: GCSectionsOff},
		{name: "other flags only", settings: []debug.BuildSetting{{Key: "-ldflags", Value: "-s -w"}}, want: GCSectionsOff},
		{name: "-trimpath records no flags", settings: []debug.BuildSetting{{Key: "-trimpath", Value: "true"}}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := linkerGCSections(tt.settings); got != tt.want {
				t.Fatalf("linkerGCSections(%v) = %q, want %q", tt.settings, got, tt.want)
			}
			bi := &debug.BuildInfo{Settings: tt.settings, Deps: []*debug.Module{{Path: WasmtimeModule + "/v25", Version: "v25.0.0"}}}
			if got := fromBuildInfo("palyra-sidecar", bi, "", "").LinkerGCSections; got != tt.want {
				t.Fatalf("fromBuildInfo: LinkerGCSections = %q, want %q", got, tt.want)
			}
			// A binary without wasmtime-go reports nothing.
			bi.Deps = nil
			if got := fromBuildInfo("palyra-host", bi, "", "").LinkerGCSections; got != "" {
				t.Fatalf("fromBuildInfo without wasmtime-go: LinkerGCSections = %q, want none", got)
			}
		})
	}
}

// TestWasmtimeGoRequired keeps WasmtimeGoRequired equal to go.mod's
// requirement, so that binaries not linking wasmtime-go report the truth.
func TestWasmtimeGoRequired(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(WasmtimeModule) + `(/v\d+)? (v\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("go.mod does not require %s", WasmtimeModule)
	}
	if got := string(m[2]); got != WasmtimeGoRequired {
		t.Fatalf("go.mod requires wasmtime-go %s; WasmtimeGoRequired is %s: update the constant", got, WasmtimeGoRequired)
	}
}

func TestOutputs(t *testing.T) {
	in := Info{Program: "palyra-host", Version: "v0.3.0", Commit: "0123456789abcdef0123", Modified: true,
		GoVersion: "go1.26.0", WasmtimeGo: "v25.0.0", ABI: abi.Version, SidecarProtocol: 1, Platform: "linux/amd64"}
	if got, want := in.String(), "palyra-host v0.3.0 (commit 0123456789ab, modified; go1.26.0)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	var text bytes.Buffer
	if err := in.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"palyra-host v0.3.0\n", "commit:            0123456789abcdef0123 (modified)\n",
		"wasmtime-go:       v25.0.0 (required by go.mod; the sidecar links it)\n", "abi:               " + abi.Version + "\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, text.String())
		}
	}
	if strings.Contains(text.String(), "gc-sections") {
		t.Errorf("a binary without wasmtime-go reports its linker's gc-sections:\n%s", text.String())
	}
	for _, tt := range []struct{ gc, want string }{
		{GCSectionsOn, "gc-sections:       on\n"},
		{"", "gc-sections:       not recorded (-trimpath)\n"},
	} {
		side := in
		side.Program, side.WasmtimeLinked, side.LinkerGCSections = "palyra-sidecar", true, tt.gc
		var text bytes.Buffer
		if err := side.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), tt.want) {
			t.Errorf("sidecar text output lacks %q:\n%s", tt.want, text.String())
		}
	}
	in.LinkerGCSections = GCSectionsOff
	var js bytes.Buffer
	if err := in.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Info
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back != in {
		t.Fatalf("JSON round trip: %v, %+v", err, back)
	}
}

func TestCompatible(t *testing.T) {
	host := Info{ABI: abi.Version, SidecarProtocol: 1}
	for _, tt := range []struct {
		name string
		side Info
		want string
	}{
		{"same", Info{ABI: abi.Version, SidecarProtocol: 1, Version: "other"}, ""},
		{"abi", Info{ABI: "palyra.skills.abi.v2", SidecarProtocol: 1}, "abi palyra.skills.abi.v2, want " + abi.Version},
		{"both", Info{ABI: "x", SidecarProtocol: 2}, "abi x, want " + abi.Version + "; sidecar protocol 2, want 1"},
	} {
		if got := host.Compatible(tt.side); got != tt.want {
			t.Errorf("%s: Compatible = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestKernelMissing(t *testing.T) {
	for _, tt := range []struct {
		name string
		k    KernelSupport
		want []string // substrings, one per item
	}{
		{"full", KernelSupport{Linux: true, LandlockABI: 6, Seccomp: true, NoNewPrivs: true}, nil},
		{"not linux", KernelSupport{}, []string{"Linux only"}},
		{"no landlock", KernelSupport{Linux: true, Seccomp: true, NoNewPrivs: true}, []string{"CONFIG_SECURITY_LANDLOCK"}},
		{"nothing", KernelSupport{Linux: true}, []string{"Landlock", "seccomp", "no_new_privs"}},
	} {
		got := tt.k.Missing()
		if len(got) != len(tt.want) {
			t.Errorf("%s: Missing = %q", tt.name, got)
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: item %d = %q, want it to name %q", tt.name, i, got[i], w)
			}
		}
	}
}

// TestSidecarBuildsCarryLDFlags keeps every command the project shows or
// runs to build palyra-sidecar (the README, docs, scripts, the Dockerfile,
// the CLI's hints) linked with SidecarLDFlags, so what a user builds is
// what the tests and the bench measured.
func TestSidecarBuildsCarryLDFlags(t *testing.T) {
	root := "../.."
	var files []string
	for _, pattern := range []string{"README.md", "docs/*.md", "scripts/*.sh", "deploy/Dockerfile", "cmd/*/*.go", "host/*/*.go", "internal/*/*.go", "sidecar/*.go"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	builds := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// A shell command continued over lines is one command.
		text := strings.ReplaceAll(string(b), "\\\n", " ")
		for i, line := range strings.Split(text, "\n") {
			if !regexp.MustCompile(`go (build|install) `).MatchString(line) || !strings.Contains(line, "cmd/palyra-sidecar") {
				continue
			}
			builds++
			if !strings.Contains(line, SidecarLDFlags) && !strings.Contains(line, "SidecarLDFlags") {
				t.Errorf("%s: command %d builds palyra-sidecar without %s:\n%s", f, i+1, SidecarLDFlags, strings.TrimSpace(line))
			}
		}
	}
	if builds < 8 {
		t.Fatalf("found %d commands that build palyra-sidecar; the scan has lost them", builds)
	}
}
