// Package skillpath holds the one path rule of Palyra skills.
//
// The same rule judges ZIP entry names in a .palyra-skill artifact, the paths
// in a manifest's integrity list, filesystem roots and module paths named by
// the manifest: a path is relative, uses '/' as separator, and has no empty,
// "." or ".." segment, no ':' and no NUL. Two names that normalize to the same
// path are the same entry. Keeping the rule in one place means an entry the
// artifact reader accepts can never be spelled differently in the manifest.
package skillpath
