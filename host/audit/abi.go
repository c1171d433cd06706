package audit

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
	"github.com/palyra-go/palyra/internal/textutil"

	"github.com/palyra-go/palyra/sdk/abi"
)

// Import module names a skill module may import from (sdk/ABI.md §2).
const (
	// moduleCapabilities is Palyra's capability-handle module (ABI §2.1).
	moduleCapabilities = abi.ModuleCapabilities
	// moduleHost is Palyra-Go's host module (ABI §2.2).
	moduleHost = abi.ModuleHost
	// moduleWASI is the WASI preview 1 module, of which the host provides
	// a subset (ABI §2.3).
	moduleWASI = abi.ModuleWASI
)

// capKind is the capability kind a handle import of moduleCapabilities is
// about.
type capKind int

const (
	capNone capKind = iota
	capHTTP
	capSecret
	capStorage
	capChannel
)

// hostFunc is one function the runtime provides, with the signature it is
// linked with. The table mirrors sdk/ABI.md §2 and the sidecar's linker
// (sidecar/internal/wasmrt), which this package must not import: the supervisor
// stays pure Go (RATIONALE.md, "A pure-Go host"). abi_test.go checks it
// against ABI.md.
type hostFunc struct {
	params, results []wasmbin.ValType
	// pointer: the function takes a pointer into the guest's memory, so a
	// module importing it must export its memory as "memory" (ABI §1).
	pointer bool
	// cap is the capability kind a handle import is about.
	cap capKind
}

func sig(params []wasmbin.ValType, results ...wasmbin.ValType) wasmbin.FuncType {
	return wasmbin.FuncType{Params: params, Results: results}
}

func (h hostFunc) funcType() wasmbin.FuncType { return sig(h.params, h.results...) }

func vals(v ...wasmbin.ValType) []wasmbin.ValType { return v }

var (
	i32 = wasmbin.I32
	i64 = wasmbin.I64
)

// hostFuncs is every import of sdk/ABI.md §2 and nothing else, by module
// and name.
var hostFuncs = map[string]map[string]hostFunc{
	moduleCapabilities: {
		"http-count":     {nil, vals(i32), false, capHTTP},
		"http-handle":    {vals(i32), vals(i32), false, capHTTP},
		"secret-count":   {nil, vals(i32), false, capSecret},
		"secret-handle":  {vals(i32), vals(i32), false, capSecret},
		"storage-count":  {nil, vals(i32), false, capStorage},
		"storage-handle": {vals(i32), vals(i32), false, capStorage},
		"channel-count":  {nil, vals(i32), false, capChannel},
		"channel-handle": {vals(i32), vals(i32), false, capChannel},
	},
	moduleHost: {
		"input-len":       {nil, vals(i32), false, capNone},
		"input-read":      {vals(i32, i32), vals(i32), true, capNone},
		"output-write":    {vals(i32, i32), vals(i32), true, capNone},
		"log":             {vals(i32, i32, i32), nil, true, capNone},
		"capability-call": {vals(i32, i32, i32), vals(i32), true, capNone},
		"response-len":    {nil, vals(i32), false, capNone},
		"response-read":   {vals(i32, i32), vals(i32), true, capNone},
		"config-len":      {nil, vals(i32), false, capNone},
		"config-read":     {vals(i32, i32), vals(i32), true, capNone},
	},
	// The WASI preview 1 subset of ABI §2.3, with the signatures of
	// wasi_snapshot_preview1 (witx), as Go's wasip1 port imports them.
	moduleWASI: {
		"args_sizes_get":      {vals(i32, i32), vals(i32), true, capNone},
		"args_get":            {vals(i32, i32), vals(i32), true, capNone},
		"environ_sizes_get":   {vals(i32, i32), vals(i32), true, capNone},
		"environ_get":         {vals(i32, i32), vals(i32), true, capNone},
		"clock_time_get":      {vals(i32, i64, i32), vals(i32), true, capNone},
		"clock_res_get":       {vals(i32, i32), vals(i32), true, capNone},
		"random_get":          {vals(i32, i32), vals(i32), true, capNone},
		"fd_write":            {vals(i32, i32, i32, i32), vals(i32), true, capNone},
		"fd_read":             {vals(i32, i32, i32, i32), vals(i32), true, capNone},
		"fd_close":            {vals(i32), vals(i32), false, capNone},
		"fd_seek":             {vals(i32, i64, i32, i32), vals(i32), true, capNone},
		"fd_fdstat_get":       {vals(i32, i32), vals(i32), true, capNone},
		"fd_fdstat_set_flags": {vals(i32, i32), vals(i32), false, capNone},
		"fd_prestat_get":      {vals(i32, i32), vals(i32), true, capNone},
		"fd_prestat_dir_name": {vals(i32, i32, i32), vals(i32), true, capNone},
		"sched_yield":         {nil, vals(i32), false, capNone},
		"poll_oneoff":         {vals(i32, i32, i32, i32), vals(i32), true, capNone},
		"proc_exit":           {vals(i32), nil, false, capNone},
	},
}

// wasiFilesystem lists the WASI preview 1 functions that reach files and
// directories. None is provided (ABI §2.3: files only through the storage
// capability), and the path_ prefix covers the rest of that family.
var wasiFilesystem = map[string]bool{
	"fd_advise":             true,
	"fd_allocate":           true,
	"fd_datasync":           true,
	"fd_fdstat_set_rights":  true,
	"fd_filestat_get":       true,
	"fd_filestat_set_size":  true,
	"fd_filestat_set_times": true,
	"fd_pread":              true,
	"fd_pwrite":             true,
	"fd_readdir":            true,
	"fd_renumber":           true,
	"fd_sync":               true,
	"fd_tell":               true,
}

// isWASIFilesystem reports whether the WASI preview 1 function name belongs
// to the filesystem family.
func isWASIFilesystem(name string) bool {
	return wasiFilesystem[name] || strings.HasPrefix(name, "path_")
}

// isWASISocket reports whether the WASI preview 1 function name is a socket
// function.
func isWASISocket(name string) bool { return strings.HasPrefix(name, "sock_") }

// isFilesystemImport reports whether im reaches the filesystem through
// WASI: any import from a wasi:filesystem interface (Palyra's rule: the
// module name, trimmed and lower-cased, starts with "wasi:filesystem") or a
// function of the WASI preview 1 filesystem family (an extension: Palyra's
// check does not look at wasi_snapshot_preview1).
func isFilesystemImport(im wasmbin.Import) bool {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(im.Module)), "wasi:filesystem") {
		return true
	}
	return im.Module == moduleWASI && isWASIFilesystem(im.Name)
}

// Bounds on how much of a name a message quotes: an import name comes from
// the module, a path from the artifact's entry names.
const (
	maxNameBytes = 96
	maxPathBytes = 512
)

// importName renders an import as "<module>.<name>", the form messages and
// details use (wasi_snapshot_preview1.path_open). Names come from untrusted
// input: a name that is long, empty, or holds anything but printable
// non-space characters is quoted and cut to maxNameBytes.
func importName(im wasmbin.Import) string {
	return displayName(im.Module) + "." + displayName(im.Name)
}

// mp renders a module path for a message: as is when it is plain (the
// usual case, and Palyra's form 'modules/x.wasm'), else quoted and cut.
// Paths pass the artifact path rule, which still allows control characters.
func mp(p string) string { return shown(p, maxPathBytes) }

// displayName returns s as is when it is short and plain, else quoted and
// cut.
func displayName(s string) string { return shown(s, maxNameBytes) }

// shown returns s as is when it is non-empty, at most limit bytes and
// plain, else quoted and cut to limit bytes.
func shown(s string, limit int) string {
	if s != "" && len(s) <= limit && plain(s) {
		return s
	}
	if len(s) > limit {
		return strconv.Quote(textutil.Truncate(s, limit)) + "..."
	}
	return strconv.Quote(s)
}

func plain(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) || r == '"' || r == '\'' || r == '\\' {
			return false
		}
	}
	return true
}

// sigString renders a signature as ABI.md writes it: "(i32, i32) -> i32",
// "() -> ()".
func sigString(ft wasmbin.FuncType) string {
	list := func(vs []wasmbin.ValType) string {
		s := make([]string, len(vs))
		for i, v := range vs {
			s[i] = v.String()
		}
		return strings.Join(s, ", ")
	}
	res := "()"
	switch len(ft.Results) {
	case 0:
	case 1:
		res = ft.Results[0].String()
	default:
		res = "(" + list(ft.Results) + ")"
	}
	return "(" + list(ft.Params) + ") -> " + res
}
