// Package fsutil writes files so that a crash never leaves one half-written.
//
// WriteAtomic writes to a temporary file in the destination's directory,
// fsyncs it, renames it over the destination and fsyncs the directory: a
// reader sees the old content or the new, never a mix. WriteExclusive does
// the same but refuses to replace an existing file, for secrets such as
// signing keys that must never be overwritten by accident.
package fsutil
