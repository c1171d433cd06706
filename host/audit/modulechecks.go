package audit

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/internal/wasmbin"
	"github.com/palyra-go/palyra/host/manifest"
)

// pageBytes is the size of a WebAssembly page.
const pageBytes = 64 << 10

// Bounds on what one check quotes from a hostile module: how many problems
// its message names (the rest are counted), and how many names its details
// list.
const (
	maxMessageItems = 8
	maxDetailItems  = 64
)

// moduleChecks lists, in order, the per-module checks that need the
// parsed module; they are reported as skipped when a module is too large or
// fails to parse.
var moduleChecks = []string{
	"wasm_module_complexity",
	"wasm_exported_function_limit",
	"wasm_wasi_filesystem_imports",
	"wasm_import_modules",
	"wasm_import_surface",
	"wasm_memory_limits",
	"wasm_data_segments",
	"wasm_table_limits",
	"wasm_start_function",
}

// moduleInfo is what the per-module checks learnt about one module, for the
// entrypoint check.
type moduleInfo struct {
	mod *wasmbin.Module // nil when the module was not analysed
	why string          // why it was not analysed
}

func (a *auditor) modulePresence(modules []string) {
	if len(modules) == 0 {
		a.add(fail("wasm_module_presence", "artifact does not contain any modules/*.wasm entries", nil))
		return
	}
	a.add(pass("wasm_module_presence", fmt.Sprintf("artifact includes %d wasm module(s)", len(modules)),
		map[string]any{"modules": append([]string{}, modules...)}))
}

// analyseModule runs the per-module checks on the module at path p.
func (a *auditor) analyseModule(p string, data []byte) *moduleInfo {
	size := uint64(len(data))
	sizeDetails := map[string]any{"module_path": p, "module_bytes": size, "max_module_bytes": a.policy.MaxModuleBytes}
	if size > a.policy.MaxModuleBytes {
		a.add(fail("wasm_module_size_limit",
			fmt.Sprintf("module '%s' exceeds max_module_bytes (%d > %d)", mp(p), size, a.policy.MaxModuleBytes), sizeDetails))
		why := "it exceeds max_module_bytes"
		a.skipRest(p, append([]string{"wasm_module_validation"}, moduleChecks...), why)
		return &moduleInfo{why: why}
	}
	a.add(pass("wasm_module_size_limit",
		fmt.Sprintf("module '%s' is within max_module_bytes (%d <= %d)", mp(p), size, a.policy.MaxModuleBytes), sizeDetails))

	mod, err := wasmbin.Parse(data, wasmbin.Limits{})
	var le *wasmbin.LimitError
	if errors.As(err, &le) {
		// Over one of the engine's own limits, which the parser applies:
		// too complex, with the same code as the limits of
		// wasm_module_complexity.
		why := "it exceeds a structural limit"
		a.skipRest(p, []string{"wasm_module_validation"}, why)
		a.limitExceeded(p, le)
		a.skipRest(p, moduleChecks[1:], why)
		return &moduleInfo{why: why}
	}
	if err != nil {
		a.add(fail("wasm_module_validation", fmt.Sprintf("module '%s' failed validation: %v", mp(p), err), parseErrorDetails(p, err)))
		why := "it failed validation"
		a.skipRest(p, moduleChecks, why)
		return &moduleInfo{why: why}
	}
	a.add(pass("wasm_module_validation",
		fmt.Sprintf("module '%s' is a well-formed WebAssembly binary (its function bodies are validated when the sidecar compiles it)", mp(p)),
		map[string]any{
			"module_path": p,
			"imports":     len(mod.Imports),
			"exports":     len(mod.Exports),
			"functions":   len(mod.Functions),
		}))

	a.moduleComplexity(p, mod)
	a.exportedFunctions(p, mod)
	a.wasiFilesystem(p, mod)
	a.importModules(p, mod)
	a.importSurface(p, mod)
	a.memoryLimits(p, mod)
	a.dataSegments(p, mod, size)
	a.tableLimits(p, mod)
	a.startFunction(p, mod)
	return &moduleInfo{mod: mod}
}

func (a *auditor) skipRest(p string, ids []string, why string) {
	for _, id := range ids {
		a.add(skipped(id, fmt.Sprintf("module '%s' was not analysed: %s", mp(p), why), map[string]any{"module_path": p}))
	}
}

// parseErrorDetails describes a wasmbin error: its code, and where and why
// the module is malformed or which limit it exceeds.
func parseErrorDetails(p string, err error) map[string]any {
	d := map[string]any{"module_path": p, "error_code": errcode.Of(err)}
	var fe *wasmbin.FormatError
	var le *wasmbin.LimitError
	switch {
	case errors.As(err, &fe):
		d["offset"] = fe.Offset
		d["section"] = fe.Section
		d["reason"] = fe.Reason
	case errors.As(err, &le):
		d["offset"] = le.Offset
		d["section"] = le.Section
		d["limit"] = le.Limit
		d["value"] = le.Value
		d["max"] = le.Max
	}
	return d
}

func (a *auditor) exportedFunctions(p string, mod *wasmbin.Module) {
	n := len(mod.ExportedFuncs())
	limit := a.policy.MaxExportedFunctions
	d := map[string]any{"module_path": p, "exported_functions": n, "max_exported_functions": limit}
	if n > limit {
		a.add(fail("wasm_exported_function_limit",
			fmt.Sprintf("module '%s' exports too many functions (%d > %d)", mp(p), n, limit), d))
		return
	}
	a.add(pass("wasm_exported_function_limit",
		fmt.Sprintf("module '%s' export function count is within limit (%d <= %d)", mp(p), n, limit), d))
}

// filesystemDeclared reports whether the manifest declares any filesystem
// root, as Palyra's wasi:filesystem check asks.
func (a *auditor) filesystemDeclared() bool {
	fs := a.m.Capabilities.Filesystem
	return len(fs.ReadRoots) > 0 || len(fs.WriteRoots) > 0
}

// wasiFilesystem is Palyra's wasm_wasi_filesystem_imports, extended to the
// WASI preview 1 filesystem functions: importing filesystem access without
// declaring a filesystem root fails.
func (a *auditor) wasiFilesystem(p string, mod *wasmbin.Module) {
	declared := a.filesystemDeclared()
	var names uniqueList
	component := false // an import from a wasi:filesystem interface, Palyra's case
	for _, im := range mod.Imports {
		if isFilesystemImport(im) {
			names.add(importName(im))
			component = component || im.Module != moduleWASI
		}
	}
	d := map[string]any{"module_path": p, "filesystem_declared": declared, "imports": bounded(names.items)}
	if len(names.items) > 0 && !declared {
		what := "WASI filesystem functions"
		if component {
			what = "wasi:filesystem"
		}
		a.add(fail("wasm_wasi_filesystem_imports",
			fmt.Sprintf("module '%s' imports %s without declared filesystem capability (%s)", mp(p), what, listedNames(names.items)), d))
		return
	}
	a.add(pass("wasm_wasi_filesystem_imports",
		fmt.Sprintf("module '%s' does not violate wasi:filesystem policy", mp(p)), d))
}

// importModules checks that every import comes from a module the host
// provides.
func (a *auditor) importModules(p string, mod *wasmbin.Module) {
	var seen, bad uniqueList
	for _, im := range mod.Imports {
		seen.add(displayName(im.Module))
		if _, ok := hostFuncs[im.Module]; !ok {
			bad.add(importName(im))
		}
	}
	d := map[string]any{"module_path": p, "import_modules": bounded(seen.items)}
	if len(bad.items) > 0 {
		d["unknown_imports"] = bounded(bad.items)
		a.add(fail("wasm_import_modules",
			fmt.Sprintf("module '%s' imports from modules the host does not provide: %s (the host provides only %s, %s and %s)",
				mp(p), listedNames(bad.items), moduleCapabilities, moduleHost, moduleWASI), d))
		return
	}
	a.add(pass("wasm_import_modules",
		fmt.Sprintf("module '%s' imports only from modules the host provides", mp(p)), d))
}

// importSurface checks every import from a host module against what the
// runtime links: the name, the kind, the exact signature, and, for the
// capability handle imports, that the manifest declares the capability kind
// at all. Imports from other modules are wasm_import_modules' concern.
func (a *auditor) importSurface(p string, mod *wasmbin.Module) {
	var fails, warns, failNames uniqueList
	grants := a.m.CapabilityGrants()
	noCapability := len(grants.HTTPHosts) == 0 && len(grants.SecretKeys) == 0 && len(grants.StoragePrefixes) == 0
	for _, im := range mod.Imports {
		funcs, ok := hostFuncs[im.Module]
		if !ok {
			continue
		}
		name := importName(im)
		bad := func(msg string) {
			fails.add(msg)
			failNames.add(name)
		}
		if im.Kind != wasmbin.KindFunc {
			bad(fmt.Sprintf("import %s is a %s, but the host provides only functions (it would fail to link)", name, im.Kind))
			continue
		}
		hf, ok := funcs[im.Name]
		if !ok {
			bad(a.notProvided(im, name))
			continue
		}
		ft, ok := typeAt(mod, im.TypeIndex)
		if !ok || !ft.Equal(hf.funcType()) {
			got := "an unknown type"
			if ok {
				got = sigString(ft)
			}
			bad(fmt.Sprintf("import %s has signature %s, but the host provides %s (it would fail to link)",
				name, got, sigString(hf.funcType())))
			continue
		}
		if msg := undeclaredCapability(hf.cap, name, grants); msg != "" {
			if hf.cap == capChannel {
				// A manifest has no way to declare channels (Palyra's
				// format), so a module that asks for channel handles
				// (as Palyra modules importing all eight handle
				// functions do) gets none: worth a warning, not a
				// quarantine.
				warns.add(msg)
				continue
			}
			bad(msg)
			continue
		}
		if im.Module == moduleHost && im.Name == "capability-call" && noCapability {
			warns.add(fmt.Sprintf(
				"import %s is present, but the manifest declares no capability with handles (no http_egress_allowlist, secrets or write_roots), so every call is not_granted", name))
		}
	}
	d := map[string]any{"module_path": p}
	switch {
	case len(fails.items) > 0:
		d["imports"] = bounded(failNames.items)
		a.add(fail("wasm_import_surface", fmt.Sprintf("module '%s': %s", mp(p), listed(fails.items)), d))
	case len(warns.items) > 0:
		a.add(warn("wasm_import_surface", fmt.Sprintf("module '%s': %s", mp(p), listed(warns.items)), d))
	default:
		a.add(pass("wasm_import_surface",
			fmt.Sprintf("module '%s' imports only functions the host provides, with their exact signatures", mp(p)), d))
	}
}

// notProvided explains why an import from a host module is not linked.
func (a *auditor) notProvided(im wasmbin.Import, name string) string {
	if im.Module != moduleWASI {
		return fmt.Sprintf("import %s is not a function of sdk/ABI.md §2 (it would fail to link)", name)
	}
	switch {
	case isWASIFilesystem(im.Name):
		msg := fmt.Sprintf("import %s is not provided: the host gives no file access (sdk/ABI.md §2.3)", name)
		if a.filesystemDeclared() {
			return msg + ", and declared filesystem roots are reached only through the storage capability"
		}
		return msg + ", and the manifest declares no filesystem capability"
	case isWASISocket(im.Name):
		return fmt.Sprintf("import %s is not provided: the host gives no socket access (sdk/ABI.md §2.3); use the http capability", name)
	default:
		return fmt.Sprintf("import %s is not provided: it is outside the WASI subset of sdk/ABI.md §2.3 (it would fail to link)", name)
	}
}

// undeclaredCapability returns why a capability handle import is refused:
// the manifest declares no capability of its kind, so it can never be
// granted a handle. It returns "" when the import is fine.
func undeclaredCapability(k capKind, name string, g manifest.CapabilityGrants) string {
	switch k {
	case capHTTP:
		if len(g.HTTPHosts) == 0 {
			return fmt.Sprintf("import %s asks for http handles, but the manifest declares no capabilities.http_egress_allowlist", name)
		}
	case capSecret:
		if len(g.SecretKeys) == 0 {
			return fmt.Sprintf("import %s asks for secret handles, but the manifest declares no capabilities.secrets", name)
		}
	case capStorage:
		if len(g.StoragePrefixes) == 0 {
			return fmt.Sprintf("import %s asks for storage handles, but the manifest declares no capabilities.filesystem.write_roots", name)
		}
	case capChannel:
		if len(g.Channels) == 0 {
			return fmt.Sprintf("import %s asks for channel handles, but a manifest cannot declare channels, so none is ever granted", name)
		}
	}
	return ""
}

// typeAt returns the function type at index i of the type section.
func typeAt(mod *wasmbin.Module, i uint32) (wasmbin.FuncType, bool) {
	if uint64(i) >= uint64(len(mod.Types)) {
		return wasmbin.FuncType{}, false
	}
	return mod.Types[i], true
}

// pagesToBytes returns pages × 64 KiB, saturating at math.MaxUint64 (a
// 64-bit memory may declare up to 2^48 pages).
func pagesToBytes(pages uint64) uint64 {
	hi, lo := bits.Mul64(pages, pageBytes)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// memoryLimits checks each memory against the effective memory limit:
// min(manifest max_memory_bytes, profile quotas.max_memory_bytes).
func (a *auditor) memoryLimits(p string, mod *wasmbin.Module) {
	limit := a.decision.Limits.MaxMemoryBytes
	var fails, warns []string
	n := mod.NumImported(wasmbin.KindMemory) + len(mod.Memories)
	if n > 1 {
		fails = append(fails, fmt.Sprintf("it declares %d memories, but the runtime supports one (multi-memory is not supported)", n))
	}
	mems := []map[string]any{}
	for i := 0; i < n; i++ {
		mt, ok := mod.MemoryType(uint32(i))
		if !ok {
			continue
		}
		if len(mems) < maxDetailItems {
			md := map[string]any{"index": i, "min_pages": mt.Min, "shared": mt.Shared, "memory64": mt.Is64}
			if mt.HasMax {
				md["max_pages"] = mt.Max
			}
			mems = append(mems, md)
		}
		if mt.Shared {
			fails = append(fails, fmt.Sprintf("memory %d is shared, but threads are not supported", i))
		}
		if mt.Is64 {
			fails = append(fails, fmt.Sprintf("memory %d is 64-bit (memory64), which the runtime does not enable", i))
		}
		if b := pagesToBytes(mt.Min); b > limit {
			fails = append(fails, fmt.Sprintf("memory %d declares a minimum of %d pages (%s), over the memory limit of %s, %s",
				i, mt.Min, byteCount(b), byteCount(limit), a.memoryLimitSource()))
		}
		if mt.HasMax {
			if b := pagesToBytes(mt.Max); b > limit {
				warns = append(warns, fmt.Sprintf("memory %d declares a maximum of %d pages (%s), over the memory limit of %s: it is capped at the limit at run time",
					i, mt.Max, byteCount(b), byteCount(limit)))
			}
		}
	}
	d := map[string]any{"module_path": p, "memory_limit_bytes": limit, "memories": mems}
	switch {
	case len(fails) > 0:
		a.add(fail("wasm_memory_limits", fmt.Sprintf("module '%s': %s", mp(p), listed(fails)), d))
	case len(warns) > 0:
		a.add(warn("wasm_memory_limits", fmt.Sprintf("module '%s': %s", mp(p), listed(warns)), d))
	default:
		a.add(pass("wasm_memory_limits", fmt.Sprintf("module '%s' memory declarations are within the memory limit of %s", mp(p), byteCount(limit)), d))
	}
}

// memoryLimitSource says where the memory limit comes from.
func (a *auditor) memoryLimitSource() string {
	q := a.m.Capabilities.Quotas.MaxMemoryBytes
	if q == 0 {
		q = manifest.DefaultMaxMemoryBytes
	}
	return fmt.Sprintf("the smaller of the manifest's capabilities.quotas.max_memory_bytes %d and the operator profile's quotas.max_memory_bytes %d",
		q, a.profileMaxMemory)
}

// dataSegments checks that the data segments fit in the memory the module
// may have.
func (a *auditor) dataSegments(p string, mod *wasmbin.Module, moduleBytes uint64) {
	limit := a.decision.Limits.MaxMemoryBytes
	total := uint64(max(mod.DataBytes, 0))
	d := map[string]any{
		"module_path":        p,
		"data_segments":      len(mod.DataSegments),
		"data_bytes":         total,
		"memory_limit_bytes": limit,
	}
	switch {
	case total > limit:
		a.add(fail("wasm_data_segments", fmt.Sprintf("module '%s' has %d bytes of data segments, over the memory limit of %s, %s",
			mp(p), total, byteCount(limit), a.memoryLimitSource()), d))
	case total > moduleBytes:
		a.add(fail("wasm_data_segments", fmt.Sprintf("module '%s' claims %d bytes of data segments in a module of %d bytes", mp(p), total, moduleBytes), d))
	default:
		a.add(pass("wasm_data_segments", fmt.Sprintf("module '%s' data segments (%d bytes) fit in the memory limit of %s", mp(p), total, byteCount(limit)), d))
	}
}

// tableLimits checks each table's minimum against the profile's
// max_table_elements. More than one table is a warning, not a failure:
// several tables are valid WebAssembly 2.0 (reference types) and each is
// capped, but together they hold up to count × limit elements outside the
// memory limit, which deserves a look.
func (a *auditor) tableLimits(p string, mod *wasmbin.Module) {
	limit := a.decision.Limits.MaxTableElements
	var fails, warns []string
	n := mod.NumImported(wasmbin.KindTable) + len(mod.Tables)
	if n > 1 {
		warns = append(warns, fmt.Sprintf("it declares %d tables, each capped at %d elements (%d in all)", n, limit, int64(n)*limit))
	}
	tables := []map[string]any{}
	for i := 0; i < n; i++ {
		tt, ok := mod.TableType(uint32(i))
		if !ok {
			continue
		}
		if len(tables) < maxDetailItems {
			td := map[string]any{"index": i, "element": tt.Elem.String(), "min": tt.Min, "table64": tt.Is64}
			if tt.HasMax {
				td["max"] = tt.Max
			}
			tables = append(tables, td)
		}
		if tt.Is64 {
			fails = append(fails, fmt.Sprintf("table %d is 64-bit (memory64), which the runtime does not enable", i))
		}
		if limit >= 0 && tt.Min > uint64(limit) {
			fails = append(fails, fmt.Sprintf("table %d declares a minimum of %d elements, over the table limit of %d (operator profile quotas.max_table_elements)",
				i, tt.Min, limit))
		}
		if tt.HasMax && limit >= 0 && tt.Max > uint64(limit) {
			warns = append(warns, fmt.Sprintf("table %d declares a maximum of %d elements, over the table limit of %d: it is capped at the limit at run time",
				i, tt.Max, limit))
		}
	}
	d := map[string]any{"module_path": p, "max_table_elements": limit, "tables": tables}
	switch {
	case len(fails) > 0:
		a.add(fail("wasm_table_limits", fmt.Sprintf("module '%s': %s", mp(p), listed(fails)), d))
	case len(warns) > 0:
		a.add(warn("wasm_table_limits", fmt.Sprintf("module '%s': %s", mp(p), listed(warns)), d))
	default:
		a.add(pass("wasm_table_limits", fmt.Sprintf("module '%s' table declarations are within the table limit of %d elements", mp(p), limit), d))
	}
}

// startFunction warns about a start function: it runs when the module is
// instantiated, before an invocation is bound, so before any input exists.
func (a *auditor) startFunction(p string, mod *wasmbin.Module) {
	d := map[string]any{"module_path": p}
	if mod.Start == nil {
		a.add(pass("wasm_start_function", fmt.Sprintf("module '%s' has no start function", mp(p)), d))
		return
	}
	idx := *mod.Start
	d["start_function"] = idx
	what := fmt.Sprintf("function %d", idx)
	if imps := mod.ImportedFuncs(); uint64(idx) < uint64(len(imps)) {
		what = "the imported function " + importName(imps[idx])
		d["start_import"] = importName(imps[idx])
	}
	a.add(warn("wasm_start_function", fmt.Sprintf(
		"module '%s' has a start function (%s): it runs at instantiation, before any input is available; it is still bounded by fuel and the epoch deadline",
		mp(p), what), d))
}

// uniqueList collects strings in the order first seen, without repeats, in
// time linear in the number added (a hostile module may have thousands of
// imports).
type uniqueList struct {
	items []string
	seen  map[string]struct{}
}

func (u *uniqueList) add(s string) {
	if _, ok := u.seen[s]; ok {
		return
	}
	if u.seen == nil {
		u.seen = map[string]struct{}{}
	}
	u.seen[s] = struct{}{}
	u.items = append(u.items, s)
}

// bounded returns at most maxDetailItems items of list, never nil.
func bounded(list []string) []string {
	if len(list) > maxDetailItems {
		list = list[:maxDetailItems]
	}
	return append([]string{}, list...)
}

// listed joins at most maxMessageItems items with "; " and counts the rest.
func listed(items []string) string {
	if len(items) <= maxMessageItems {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:maxMessageItems], "; ") + fmt.Sprintf("; and %d more", len(items)-maxMessageItems)
}

// listedNames joins at most maxMessageItems names with ", " and counts the
// rest.
func listedNames(names []string) string {
	if len(names) <= maxMessageItems {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:maxMessageItems], ", ") + fmt.Sprintf(" and %d more", len(names)-maxMessageItems)
}

// byteCount renders n bytes in a binary unit when n is a whole number of
// KiB, MiB or GiB ("64 MiB"), else as "<n> bytes". Details keep exact
// numbers.
func byteCount(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
