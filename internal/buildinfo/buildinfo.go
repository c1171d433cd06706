package buildinfo

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/palyra-go/palyra/sdk/abi"
	"github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// Set by the linker (-ldflags -X, see the package documentation); empty
// in an ordinary build.
var (
	version string
	commit  string
)

// Unknown is the commit of a binary built without a version-control
// stamp, and the value of any other field the build does not record.
const Unknown = "unknown"

// Devel is the version of a binary built from a checkout without a
// linker-set version.
const Devel = "devel"

// WasmtimeModule is the module path of wasmtime-go (any major version).
const WasmtimeModule = "github.com/bytecodealliance/wasmtime-go"

// WasmtimeGoRequired is the wasmtime-go version go.mod requires; a test
// keeps it equal to go.mod. It is reported by binaries that do not link
// wasmtime-go themselves (palyra, palyra-host), whose sidecar does.
const WasmtimeGoRequired = "v25.0.0"

// SidecarLDFlags is the -ldflags value palyra-sidecar is built with:
//
//	go build -ldflags=-extldflags=-Wl,--gc-sections ./cmd/palyra-sidecar
//
// The sidecar links wasmtime's static library through cgo, and Go's
// external link keeps every section of it, reached or not. With the
// linker's --gc-sections the binary drops what nothing calls (text 20.2
// to 14.7 MB, the file 45.6 to 33.8 MB), and an idle sidecar maps less
// of it: 1 to 8 MB less RSS in palyra-bench, depending on the page cache
// (RATIONALE.md, "A sidecar linked without dead sections"). A binary
// without cgo is linked by Go itself and ignores the flag, so one build
// command may carry it for all the commands. cgo does not accept the flag
// in a #cgo LDFLAGS line, so it cannot live in the source.
const SidecarLDFlags = "-extldflags=-Wl,--gc-sections"

// The values of Info.LinkerGCSections a build records.
const (
	GCSectionsOn  = "on"
	GCSectionsOff = "off"
)

// Info describes a binary.
type Info struct {
	// Program is the binary's name (palyra, palyra-host, palyra-sidecar).
	Program string `json:"program"`
	// Version is the linker-set version, else the main module's version
	// (go install MODULE@VERSION), else Devel.
	Version string `json:"version"`
	// Commit is the git revision the binary was built from, else Unknown.
	Commit string `json:"commit"`
	// CommitTime is the revision's commit time (RFC 3339), "" when unknown.
	CommitTime string `json:"commit_time,omitempty"`
	// Modified is whether the working tree had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"go_version"`
	// WasmtimeGo is the wasmtime-go version; WasmtimeLinked whether this
	// binary links it (else WasmtimeGo is WasmtimeGoRequired).
	WasmtimeGo     string `json:"wasmtime_go"`
	WasmtimeLinked bool   `json:"wasmtime_linked"`
	// ABI is the skills ABI version (sdk/abi.Version).
	ABI string `json:"abi"`
	// SidecarProtocol is the go-plugin protocol version of the sidecar
	// contract (sidecarplugin.Handshake.ProtocolVersion).
	SidecarProtocol uint `json:"sidecar_protocol"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
	// LinkerGCSections is whether the build asked the external linker to
	// drop unreferenced sections (SidecarLDFlags, or -Wl,--gc-sections in
	// CGO_LDFLAGS): GCSectionsOn or GCSectionsOff for a binary that links
	// wasmtime-go, the only one it matters for; "" for any other, and when
	// the binary does not record its linker flags (go build -trimpath
	// leaves them out).
	LinkerGCSections string `json:"linker_gc_sections,omitempty"`
	// Kernel is the system's support for the sidecar hardening, reported
	// by palyra-sidecar only (nil elsewhere).
	Kernel *KernelSupport `json:"kernel,omitempty"`
}

// Get returns the Info of the running binary, named program.
func Get(program string) Info {
	bi, _ := debug.ReadBuildInfo()
	return fromBuildInfo(program, bi, version, commit)
}

// fromBuildInfo builds an Info from bi (nil when the binary has none)
// and the linker-set ldVersion and ldCommit ("" when not set).
func fromBuildInfo(program string, bi *debug.BuildInfo, ldVersion, ldCommit string) Info {
	in := Info{
		Program: program, Version: Devel, Commit: Unknown, GoVersion: runtime.Version(),
		WasmtimeGo: WasmtimeGoRequired, ABI: abi.Version,
		SidecarProtocol: sidecarplugin.Handshake.ProtocolVersion,
		Platform:        runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi != nil {
		if bi.GoVersion != "" {
			in.GoVersion = bi.GoVersion
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			in.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if s.Value != "" {
					in.Commit = s.Value
				}
			case "vcs.time":
				in.CommitTime = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
		for _, d := range bi.Deps {
			if d.Path != WasmtimeModule && !strings.HasPrefix(d.Path, WasmtimeModule+"/") {
				continue
			}
			if d.Replace != nil && d.Replace.Version != "" {
				d = d.Replace
			}
			in.WasmtimeGo, in.WasmtimeLinked = d.Version, true
		}
		if in.WasmtimeLinked {
			in.LinkerGCSections = linkerGCSections(bi.Settings)
		}
	}
	if ldVersion != "" {
		in.Version = ldVersion
	}
	if ldCommit != "" {
		in.Commit, in.CommitTime, in.Modified = ldCommit, "", false
	}
	return in
}

// linkerGCSections reports whether the build's linker flags turn the
// linker's --gc-sections on (GCSectionsOn, GCSectionsOff): its last
// mention wins, and the flags of -ldflags (-extldflags) come after
// CGO_LDFLAGS on the link line. It returns "" for a -trimpath build,
// whose build info leaves the flags out.
func linkerGCSections(settings []debug.BuildSetting) string {
	on := false
	for _, s := range settings {
		if s.Key == "-trimpath" && s.Value == "true" {
			return ""
		}
	}
	for _, key := range []string{"CGO_LDFLAGS", "-ldflags"} {
		for _, s := range settings {
			if s.Key != key {
				continue
			}
			if i := strings.LastIndex(s.Value, "-gc-sections"); i >= 0 {
				on = !strings.HasSuffix(s.Value[:i], "-no")
			}
		}
	}
	if on {
		return GCSectionsOn
	}
	return GCSectionsOff
}

// ShortCommit is the first 12 characters of the commit (all of Unknown).
func (in Info) ShortCommit() string {
	if len(in.Commit) > 12 && in.Commit != Unknown {
		return in.Commit[:12]
	}
	return in.Commit
}

// String is the one-line form: "palyra-host devel (commit 0123456789ab,
// modified; go1.26.0)".
func (in Info) String() string {
	c := in.ShortCommit()
	if in.Modified {
		c += ", modified"
	}
	return fmt.Sprintf("%s %s (commit %s; %s)", in.Program, in.Version, c, in.GoVersion)
}

// WriteText writes in as aligned "key: value" lines, the first naming
// the program and its version.
func (in Info) WriteText(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "%s %s\n", in.Program, in.Version); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	commit := in.Commit
	if in.Modified {
		commit += " (modified)"
	}
	wasm := in.WasmtimeGo
	if !in.WasmtimeLinked {
		wasm += " (required by go.mod; the sidecar links it)"
	}
	fmt.Fprintf(tw, "  commit:\t%s\n", commit)
	if in.CommitTime != "" {
		fmt.Fprintf(tw, "  commit time:\t%s\n", in.CommitTime)
	}
	fmt.Fprintf(tw, "  go:\t%s\n", in.GoVersion)
	fmt.Fprintf(tw, "  wasmtime-go:\t%s\n", wasm)
	fmt.Fprintf(tw, "  abi:\t%s\n", in.ABI)
	fmt.Fprintf(tw, "  sidecar protocol:\t%d\n", in.SidecarProtocol)
	fmt.Fprintf(tw, "  platform:\t%s\n", in.Platform)
	if in.WasmtimeLinked {
		gc := in.LinkerGCSections
		if gc == "" {
			gc = "not recorded (-trimpath)"
		}
		fmt.Fprintf(tw, "  gc-sections:\t%s\n", gc)
	}
	if k := in.Kernel; k != nil {
		fmt.Fprintf(tw, "  hardening:\tlandlock abi %d (sidecar asks for %d), seccomp %t, no_new_privs %t\n", k.LandlockABI, k.LandlockTarget, k.Seccomp, k.NoNewPrivs)
		for _, m := range k.Missing() {
			fmt.Fprintf(tw, "  missing:\t%s\n", m)
		}
	}
	return tw.Flush()
}

// WriteJSON writes in as one indented JSON object.
func (in Info) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(in)
}

// Compatible reports whether a sidecar whose Info is side can serve a
// host whose Info is in: the same skills ABI and sidecar protocol. It
// returns "" when they match, else what differs.
func (in Info) Compatible(side Info) string {
	var diffs []string
	if side.ABI != in.ABI {
		diffs = append(diffs, fmt.Sprintf("abi %s, want %s", side.ABI, in.ABI))
	}
	if side.SidecarProtocol != in.SidecarProtocol {
		diffs = append(diffs, fmt.Sprintf("sidecar protocol %d, want %d", side.SidecarProtocol, in.SidecarProtocol))
	}
	return strings.Join(diffs, "; ")
}

// KernelSupport is what the running system offers the sidecar's
// hardening (package sidecar/internal/harden): palyra-sidecar reports it
// in `palyra-sidecar version --json`, read by `palyra doctor` and by
// palyra-host's hardened deployment profile.
type KernelSupport struct {
	// Linux is false on systems where the hardening is a no-op.
	Linux bool `json:"linux"`
	// LandlockABI is the kernel's Landlock ABI version, 0 without
	// Landlock; LandlockTarget the newest ABI the sidecar asks for (an
	// older one restricts fewer rights).
	LandlockABI    int `json:"landlock_abi"`
	LandlockTarget int `json:"landlock_target"`
	// Seccomp is whether seccomp filters can be loaded.
	Seccomp bool `json:"seccomp"`
	// NoNewPrivs is whether the kernel has the no_new_privs bit.
	NoNewPrivs bool `json:"no_new_privs"`
}

// Missing lists what the hardening cannot apply on this system, each
// item naming what the kernel lacks and how to get it; nil when the
// sidecar hardens fully (Landlock at any ABI, seccomp, no_new_privs).
func (k KernelSupport) Missing() []string {
	if !k.Linux {
		return []string{"not Linux: the sidecar hardening (seccomp, Landlock, no_new_privs) exists on Linux only"}
	}
	var out []string
	if k.LandlockABI == 0 {
		out = append(out, "Landlock (Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK, and landlock in the lsm= boot parameter)")
	}
	if !k.Seccomp {
		out = append(out, "seccomp filters (CONFIG_SECCOMP_FILTER; a container runtime may block seccomp(2): allow it)")
	}
	if !k.NoNewPrivs {
		out = append(out, "no_new_privs (Linux 3.5 or later)")
	}
	return out
}
