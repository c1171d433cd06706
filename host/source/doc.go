// Package source gets skill artifacts from where they are published: a
// signed Palyra registry index (served over HTTPS, or a local directory;
// package registry) or an OCI registry (package oci). A Fetcher resolves a
// Ref to the artifact's bytes and the source the inventory records, and
// finds the newest version at a recorded source (for outdated and update).
//
// Nothing fetched here is trusted for what it is: the artifact's own
// signature, verified by the installer against the trust store, decides.
// What this package checks is that the bytes are the ones the source named
// (the index entry's sha256, the OCI digest) and that the manifest inside
// names the skill, version and publisher the source said.
package source
