// Package toolschema compiles a tool's input and output JSON Schemas and
// validates decoded JSON against them.
//
// It is the supervisor's check of the schemas a supervisor.Target carries
// (the host checks its manifests' schemas itself, in host/manifest). It
// lives apart from the sidecar on purpose: the schema library compiles its
// meta-schemas when its package is initialized (2.4 ms and 1.7 MB of
// allocations in every process that links it), and a sidecar, which starts
// once per skill and validates nothing on the trusted side's behalf, does
// not link it.
package toolschema
