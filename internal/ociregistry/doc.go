// Package ociregistry runs a real OCI registry process for tests: Debian's
// docker-registry (the CNCF distribution registry 2.8, /usr/bin/docker-registry)
// serving on 127.0.0.1 at a free port, with filesystem storage in a
// temporary directory, optionally htpasswd basic auth (bcrypt) and TLS with
// a CA made for the test. Start waits until GET /v2/ answers; Close kills
// the process, reaps it and removes its directory. The process gets
// Pdeathsig SIGKILL, so it does not outlive a test binary that dies.
//
// A missing binary fails the test with a message naming the package to
// install (the CI installs docker-registry); nothing is skipped silently.
package ociregistry
