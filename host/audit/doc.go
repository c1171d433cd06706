// Package audit is the static security audit of a skill artifact: what
// stands between "the signature is good" and "this code may run". It reads a
// verified artifact (host/artifact), its manifest (host/manifest) and the
// operator's capability profile (host/policy), parses every WebAssembly
// module with host/internal/wasmbin, and reports each finding as a check. Any failed
// check means the skill must be quarantined, with the failed checks'
// messages as the reasons: fail closed, and say why.
//
// The audit is pure Go and never compiles or runs a module (RATIONALE.md,
// "A pure-Go host"): it sees what a module declares (imports, exports,
// memories, tables, data, start function), not what its code does.
// Compilation happens later, in a sidecar.
//
// # Use
//
//	vr, err := artifact.Verify(ctx, data, artifact.VerifyOptions{Trust: store})
//	if err != nil { ... } // not verified: no audit
//	r, err := audit.Audit(ctx, audit.Input{
//		Inspection:    vr.Inspection,
//		TrustDecision: vr.TrustDecision,
//		Profile:       profile, // nil: policy.Default()
//	})
//	if err != nil { ... }         // bad input, never a finding
//	if err := r.Err(); err != nil { // errors.Is(err, audit.ErrAuditFailed)
//		// quarantine with r.QuarantineReasons
//	}
//
// # Checks
//
// The report keeps the shape, check ids, statuses (pass, warn, fail,
// skipped), severities (info, warning, error), messages and details of
// Palyra's SkillSecurityAuditReport, and adds checks Palyra lacks. In report
// order:
//
//	signature_validity               pass: verification checked signature and payload hash
//	sbom_presence                    pass: sbom.cdx.json is present and valid
//	provenance_presence              pass: provenance.json is present and valid (its digests: provenance_module_digest)
//	manifest_sanity                  pass: the manifest parsed and validated
//	manifest_warning:<code>          warn: one per manifest warning (legacy_manifest_version, ...)
//	manifest_filesystem_scopes       pass: lists read_roots and write_roots
//	manifest_http_egress_scopes      pass: lists the http egress hosts
//	manifest_secret_scopes           pass: lists the secret scopes
//	forbidden_device_capabilities    fail: device_capabilities declared and the profile's allow_device is off
//	forbidden_wildcard_capabilities  fail: any wildcard_opt_in flag set and the profile's allow_wildcards is off
//	policy_compliance                pass: the manifest stays inside the operator profile
//	policy:<capability>              fail: one per profile violation, e.g. policy:capabilities.http_egress_allowlist[0]
//	wasm_module_presence             fail: no modules/*.wasm entry
//
// then, for each module in byte-wise order of its path:
//
//	wasm_module_size_limit           fail: the module is larger than MaxModuleBytes
//	wasm_module_validation           fail: not a well-formed binary module (WAT text included)
//	wasm_module_complexity           fail: a structural count over ModuleLimits (see "Compile budget"), code
//	                                       module_too_complex; also when the parser stops at one of the
//	                                       engine's own limits (wasm_module_validation is then skipped)
//	wasm_exported_function_limit     fail: more function exports than MaxExportedFunctions
//	wasm_wasi_filesystem_imports     fail: filesystem imports (wasi:filesystem*, or WASI preview 1 path_* and friends) without a declared filesystem root
//	wasm_import_modules              fail: an import from a module other than the three of sdk/ABI.md §2
//	wasm_import_surface              fail: an import the runtime does not link (unknown name, not a function, wrong
//	                                       signature, WASI outside the §2.3 subset: files, sockets, ...), or a
//	                                       capability handle import of a kind the manifest does not declare
//	                                       (http, secrets, storage); warn: channel handle imports (a manifest
//	                                       cannot declare channels) and capability-call with no capability declared
//	wasm_memory_limits               fail: more than one memory, a shared or 64-bit memory, or a minimum over the memory
//	                                       limit (min of the manifest's max_memory_bytes and the profile cap);
//	                                       warn: a maximum over it (capped at run time)
//	wasm_data_segments               fail: data segments larger than the memory limit
//	wasm_table_limits                fail: a 64-bit table or a minimum over the profile's max_table_elements;
//	                                       warn: a maximum over it, or more than one table
//	wasm_start_function              warn: a start function (it runs before any input exists)
//
// and finally:
//
//	wasm_entrypoint                  fail: the module the runtime will run (operator.plugin.default_module_path,
//	                                       else the only module) lacks the entrypoint of sdk/ABI.md §1
//	                                       (default_entrypoint, else palyra_plugin_main, else run) as () -> i32,
//	                                       has an _initialize that is not () -> (), is a command module (_start
//	                                       without _initialize), or imports pointer-taking host functions without
//	                                       exporting "memory"; skipped when that module was not analysed
//	provenance_module_digest         per module, in path order: fail: a provenance subject naming the module gives a
//	                                       sha256/sha384/sha512 digest that differs from the module's (the message
//	                                       names the module, the expected and the actual digest), or no subject names
//	                                       the module while some subject carries a real digest; warn: the subjects
//	                                       naming it carry only placeholders ("placeholder-generated-at-build") or no
//	                                       digest, or no subject names it and none carries a real digest
//	sbom_entry_digest                per entry a component of sbom.cdx.json names by its path with a SHA-256/384/512
//	                                       hash, in path order: fail: the hash differs from the entry's (the message
//	                                       names the entry, the expected and the actual digest); then warn once:
//	                                       the SBOM names entries but not every module; or, instead of all of them,
//	                                       skipped: it names no entry with a hash (Palyra's example), so nothing
//	                                       is compared
//	vulnerability_feed_hook          fail: an entry of the installed deny feed (host/feed, Input.DenyFeed) matches a
//	                                       module's SHA-256, the artifact's SHA-256 or its signing key (the message
//	                                       gives each entry's reason and reference), or the installed feed cannot be
//	                                       used (Input.DenyFeedError: fail closed); skipped: no feed is installed
//
// A provenance subject names a module by its entry path
// ("modules/x.wasm"), by that path without "modules/" (how Palyra's builder
// and its example name "module.wasm"), or else by its base name when no
// other module has that base name. Subjects naming nothing in the
// artifact (the artifact itself, say) are not an error.
//
// Per-module checks keep Palyra's convention: the check id is the same for
// every module and details["module_path"] names the module (so
// Report.FailedChecks may hold an id more than once). When a module is too
// large or fails to parse, its remaining per-module checks are reported as
// skipped rather than left out. A check that fails for several reasons (two
// bad imports) names each in its one message, up to a bound, and counts the
// rest; names taken from a module are quoted and cut when they are long or
// unprintable.
//
// Several tables are a warning rather than a failure: they are valid
// WebAssembly 2.0 and the runtime caps each, but together they hold up to
// count × max_table_elements elements outside the memory limit. A memory
// declaring a maximum over the limit is a warning too: the runtime caps it.
//
// # Compile budget
//
// The audit cannot see what a module's code does, but it can bound what
// compiling it costs: wasmtime's compile time and memory grow with the
// number of functions, the size of each body and the locals each declares
// (300,000 empty functions, a 1.2 MB module that compresses to a few KB,
// take about 27 s and 1.6 GB to compile). wasm_module_complexity refuses a
// module past any of these limits (Options.ModuleLimits; the defaults,
// each at or under wasmparser's MAX_WASM_* of limits.rs, against what the
// Go guests of sdk/examples declare):
//
//	limit                    default    wasmparser  Go guest (echo)  why
//	max_functions            50,000     1,000,000   2,431            ~100 µs and ~6 KB of compile per empty function
//	max_function_body_bytes  131,072    131,072     29,238           one body is compiled at once, in memory
//	max_function_locals      10,000     50,000      20               every local is zeroed at entry
//	max_locals               1,000,000  -           9,870            50M locals (1,000 × 50,000) take 4.5 s
//	max_types                10,000     1,000,000   14
//	max_imports              1,000      100,000     20
//	max_exports              1,000      100,000     3
//	max_globals              10,000     1,000,000   8
//	max_tables               100        100         1
//	max_data_segments        100,000    100,000     41,722           Go emits one segment per symbol
//	max_element_segments     10,000     100,000     1
//
// Functions, globals and tables count imports and definitions. A larger Go
// program (8.6 MB, just over max_module_bytes: net/http, go/types,
// crypto/x509 and more) has 4,836 functions, a 50,636-byte largest body and
// 85,495 data segments, and compiles in about 12.5 s of CPU and 280 MB.
//
// A module within every limit can still be costly (8 MiB of bodies made of
// calls compile for about 46 CPU seconds and 940 MB), so the precompile
// child runs under a CPU-time and a memory cap (host/supervisor
// Config.PrecompileCPUTime and PrecompileMemoryBytes), and a module that
// exceeds either is quarantined with compile_budget_exceeded, naming the
// cap. A version the audit quarantines is not compiled at all.
//
// # Differences from Palyra
//
//   - WAT text fails wasm_module_validation (Palyra's wasmtime compiles it).
//   - A module Palyra admits but its runtime cannot run (the empty module of
//     Palyra's baseline test, which has no run export) fails wasm_entrypoint.
//   - wasm_wasi_filesystem_imports also covers the WASI preview 1 filesystem
//     functions; Palyra matches only module names starting wasi:filesystem.
//   - The policy's allow_device_capabilities and allow_wildcard_capabilities
//     come from the operator profile, so the audit and the grants cannot
//     disagree; Options carry only the two limits.
//   - wasm_module_complexity is not Palyra's: it bounds compile cost
//     (see "Compile budget").
//   - vulnerability_feed_hook consults a signed deny feed (host/feed)
//     instead of warning about $PALYRA_SKILL_AUDIT_VULN_FEED_HOOK, which is
//     not read.
//   - provenance_module_digest compares provenance digests with the
//     modules; Palyra never does.
//   - wasm_module_size_limit's pass is reported before validation, so a
//     module that fails validation still shows its size check.
//
// # Determinism
//
// With Options.Now fixed, the same input gives a Report
// whose JSON encoding is identical byte for byte: modules are visited in
// byte-wise path order, checks keep a fixed order, import problems follow
// the import section, and details are maps, which encoding/json writes
// with sorted keys.
//
// # Errors and concurrency
//
// Audit returns an error only for unusable input: ErrInvalidInput (code
// invalid_audit_input), an invalid profile (policy.ErrInvalidProfile) or
// a done context. Report.Err returns a *FailedError wrapping ErrAuditFailed
// (code audit_failed). Every error is prefixed "audit: ". Audit is safe for
// concurrent use; a Report is plain data.
package audit
