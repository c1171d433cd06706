// Package manifest parses and validates skill.toml, the manifest of a Palyra
// skill: its identity, its tools with their JSON Schemas, the capabilities it
// requests, its quotas and the runtime versions it is compatible with.
//
// The format and every rule follow Palyra's SkillManifest so that manifests
// written for Palyra load here unchanged; on top of Palyra, each tool's
// input_schema and output_schema must compile as JSON Schema. Every error
// wraps one of the package's sentinels (errors.Is) and names the field path
// at fault, e.g. entrypoints.tools[1].id.
package manifest
