// Package manifest parses, validates and writes skill.toml, the manifest of
// a Palyra skill: its identity, its tools with their JSON Schemas, the
// capabilities it requests, its quotas and the runtime versions it is
// compatible with.
//
// Every other part of the host reads a skill through this package: the
// artifact builder and verifier (Parse, Marshal, CheckCompat), the installer
// and audit (Warnings), the policy layer (CapabilityGrants, PolicyBindings)
// and the supervisor, which checks every tool call's input and output
// against the tool's schemas (Manifest.ToolSchemas).
//
// docs/skill-toml.md is the authors' reference of every field; doc_test.go
// fails when a field of the types here has no row there, or a row names a
// field that is gone, so a new field needs its line in that document.
//
// # Compatibility with Palyra
//
// The format and every rule follow Palyra's SkillManifest, so a manifest
// written for Palyra loads here unchanged and one written here loads there:
//
//   - decoding is strict: an unknown key at any level is an error, and so is
//     a missing required key or a value of the wrong type;
//   - keys left out get Palyra's defaults (manifest_version 2, quotas of
//     30000 ms, 10,000,000 fuel and 64 MiB, contract and config schema
//     version 1);
//   - the legacy names compat.min_protocol_major and compat.min_runtime_version
//     are read, never written, and may not be given with their current names;
//   - values are judged on trimmed copies, but the Manifest keeps what was
//     written;
//   - legacy manifest_version 1 is accepted, with an empty operator section.
//
// On top of Palyra, each tool's input_schema and output_schema must compile
// as JSON Schema (draft 2020-12 unless "$schema" names another draft). The
// compiler loads nothing: a "$ref" to an http or file URL fails closed. A
// few values Palyra would let through are refused: TOML date-times and
// non-finite floats in schemas (JSON has no such values), integrity entries
// that break the path rule or are not lower-case SHA-256 hex, and manifests
// larger than MaxManifestBytes.
//
// # Errors
//
// A problem with a manifest is a *FieldError whose Path names the field at
// fault, e.g. entrypoints.tools[1].id, and which wraps one sentinel:
// ErrParse (not TOML, unknown key, wrong type), ErrValidation (a broken
// rule) or a compat sentinel. A path that breaks the artifact path rule also
// wraps skillpath.ErrInvalid and reports its code. Marshal and CheckCompat
// return one *FieldError. Parse reports every problem of the document in one
// run, so an author fixes them in one round: one as a *FieldError, several
// as a *Problems listing each with its line and column (at most
// MaxProblems); errors.Is and errors.As see through it to every problem. A
// document that is not TOML at all has just its syntax error. Tool input and output mismatches are *InstanceError values
// wrapping ErrInputSchema or ErrOutputSchema.
//
// # Concurrency
//
// A Manifest is plain data: it may be read from several goroutines, and two
// manifests can be compared with reflect.DeepEqual. ToolSchemas values are
// immutable and safe for concurrent use.
//
// # Key order
//
// A Manifest holds the tool schemas as maps, so the order in which the
// author listed a schema's properties (the order a generated form shows
// its fields in) is not in it, and Marshal writes the keys sorted.
// MarshalOrdered, which the artifact builder uses, writes the schemas in
// the key order of the skill.toml they were parsed from, and
// InputPropertyOrders reads that order back from a skill.toml for the API.
package manifest
