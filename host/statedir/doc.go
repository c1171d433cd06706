// Package statedir decides where Palyra-Go keeps its state on disk.
//
// One state directory holds everything a host owns: the trust store, the
// installed skills, the inventory database and the sidecars' caches. The CLI,
// the daemon and Go apps that embed the host all resolve it the same way, so
// they always agree on which files they share:
//
//  1. an explicit value (the --state-dir flag, or host.Config.StateDir);
//  2. the PALYRA_STATE_DIR environment variable;
//  3. a per-user default: $XDG_STATE_HOME/palyra, else ~/.local/state/palyra.
//
// The trust store is <state>/skills/trust-store.json unless --trust-store or
// PALYRA_SKILLS_TRUST_STORE names another file (Palyra's variable; set but
// empty is an error rather than a silent fallback).
package statedir
