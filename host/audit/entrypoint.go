package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/internal/wasmbin"
)

// Entrypoint names of sdk/ABI.md §1.
const (
	entryPalyraGo = "palyra_plugin_main"
	entryPalyra   = "run"
)

// runModule returns the module the runtime will run: the manifest's
// operator.plugin.default_module_path, else the only module. When there is
// none it returns "" and why.
func (a *auditor) runModule(modules []string) (path, source, why string) {
	dmp := ""
	if pl := a.m.Operator.Plugin; pl != nil {
		dmp = strings.TrimSpace(pl.DefaultModulePath)
	}
	switch {
	case dmp != "":
		if !slices.Contains(modules, dmp) {
			return "", "", fmt.Sprintf("operator.plugin.default_module_path '%s' names no module of the artifact", mp(dmp))
		}
		return dmp, "default_module_path", ""
	case len(modules) == 1:
		return modules[0], "only_module", ""
	case len(modules) == 0:
		return "", "", ""
	default:
		return "", "", fmt.Sprintf("the artifact holds %d modules and operator.plugin.default_module_path is not set, so the runtime cannot choose which one to run",
			len(modules))
	}
}

// entrypointCheck checks the module the runtime will run against ABI §1:
// the entrypoint (operator.plugin.default_entrypoint, else
// palyra_plugin_main, else run) is an exported function () -> i32;
// _initialize, when exported, is () -> (); a module exporting _start
// without _initialize is a command module, which is not supported; and a
// module that imports pointer-taking host functions exports its memory as
// "memory".
func (a *auditor) entrypointCheck(modules []string, parsed map[string]*moduleInfo) {
	const id = "wasm_entrypoint"
	p, source, why := a.runModule(modules)
	if p == "" {
		if why == "" {
			a.add(skipped(id, "no module to run: the artifact has no modules/*.wasm entry", nil))
			return
		}
		a.add(fail(id, why, map[string]any{"modules": append([]string{}, modules...)}))
		return
	}
	d := map[string]any{"module_path": p, "module_source": source}
	info := parsed[p]
	if info == nil || info.mod == nil {
		reason := "it was not analysed"
		if info != nil {
			reason = info.why
		}
		a.add(skipped(id, fmt.Sprintf("module '%s' was not analysed: %s", mp(p), reason), d))
		return
	}
	mod := info.mod

	entry, entrySource := "", ""
	if pl := a.m.Operator.Plugin; pl != nil && strings.TrimSpace(pl.DefaultEntrypoint) != "" {
		entry, entrySource = strings.TrimSpace(pl.DefaultEntrypoint), "default_entrypoint"
	} else if _, ok := mod.Export(entryPalyraGo); ok {
		entry, entrySource = entryPalyraGo, "exported"
	} else {
		entry, entrySource = entryPalyra, "fallback"
	}
	d["entrypoint"] = entry
	d["entrypoint_source"] = entrySource

	var fails []string
	want := sig(nil, wasmbin.I32)
	if ex, ok := mod.Export(entry); !ok {
		if entrySource == "fallback" {
			fails = append(fails, fmt.Sprintf("it exports no entrypoint: neither %s nor %s is exported", entryPalyraGo, entryPalyra))
		} else {
			fails = append(fails, fmt.Sprintf("it does not export the entrypoint %q named by operator.plugin.default_entrypoint", entry))
		}
	} else if ex.Kind != wasmbin.KindFunc {
		fails = append(fails, fmt.Sprintf("its entrypoint %q is a %s, not a function () -> i32", entry, ex.Kind))
	} else if ft, _ := mod.ExportedFunc(entry); !ft.Equal(want) {
		fails = append(fails, fmt.Sprintf("its entrypoint %q has type %s, not () -> i32", entry, sigString(ft)))
	}

	ex, hasInit := mod.Export("_initialize")
	d["initialize"] = hasInit
	if hasInit {
		if ft, ok := mod.ExportedFunc("_initialize"); ex.Kind != wasmbin.KindFunc || !ok {
			fails = append(fails, fmt.Sprintf("its _initialize export is a %s, not a function () -> ()", ex.Kind))
		} else if !ft.Equal(sig(nil)) {
			fails = append(fails, fmt.Sprintf("its _initialize has type %s, not () -> ()", sigString(ft)))
		}
	}
	if _, hasStart := mod.Export("_start"); hasStart && !hasInit {
		fails = append(fails, "it is a command module: it exports _start but not _initialize, and _start is never called (sdk/ABI.md §1: reactor, not command; a Go guest builds with -buildmode=c-shared)")
	}

	var pointers uniqueList
	for _, im := range mod.ImportedFuncs() {
		if hf, ok := hostFuncs[im.Module][im.Name]; ok && hf.pointer {
			pointers.add(importName(im))
		}
	}
	memEx, hasMem := mod.Export("memory")
	memExported := hasMem && memEx.Kind == wasmbin.KindMemory
	d["memory_exported"] = memExported
	if len(pointers.items) > 0 && !memExported {
		fails = append(fails, fmt.Sprintf("it imports pointer-taking host functions (%s) but exports no memory named \"memory\"", listedNames(pointers.items)))
	}

	if len(fails) > 0 {
		a.add(fail(id, fmt.Sprintf("module '%s': %s", mp(p), listed(fails)), d))
		return
	}
	a.add(pass(id, fmt.Sprintf("module '%s' exports the entrypoint %q as a function () -> i32", mp(p), entry), d))
}
