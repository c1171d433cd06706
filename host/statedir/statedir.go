package statedir

import (
	"fmt"
	"path/filepath"

	"github.com/palyra-go/palyra/host/errcode"
)

// ErrInvalid reports a state location that cannot be used.
var ErrInvalid = errcode.New("invalid_state_dir", "invalid state directory location")

// ErrMissing reports a state directory that does not exist where a command
// that only reads it was pointed: the commands that write create it, the
// ones that only look refuse rather than show an empty state (a mistyped
// --state-dir would otherwise look like a host with nothing installed).
var ErrMissing = errcode.New("state_dir_missing", "state directory does not exist")

// Sources are what Resolve chooses the state directory from. A command fills
// them from its flags and its environment; library code passes only
// Explicit.
type Sources struct {
	// Explicit is a directory named outright (--state-dir,
	// host.Config.StateDir). It wins when not "".
	Explicit string
	// Env is the value of $PALYRA_STATE_DIR ("" when unset; a command
	// refuses a variable that is set but empty before it gets here).
	Env string
	// XDGStateHome is $XDG_STATE_HOME; it is used only when absolute, as
	// the XDG specification says.
	XDGStateHome string
	// Home is the user's home directory, the last resort:
	// <Home>/.local/state/palyra.
	Home string
}

// Resolve returns the absolute state directory: s.Explicit, else s.Env,
// else <s.XDGStateHome>/palyra, else <s.Home>/.local/state/palyra. With
// none of them it fails with ErrInvalid. It reads no environment and
// creates nothing.
func Resolve(s Sources) (string, error) {
	dir := s.Explicit
	if dir == "" {
		dir = s.Env
	}
	if dir == "" && s.XDGStateHome != "" && filepath.IsAbs(s.XDGStateHome) {
		dir = filepath.Join(s.XDGStateHome, "palyra")
	}
	if dir == "" && s.Home != "" {
		dir = filepath.Join(s.Home, ".local", "state", "palyra")
	}
	if dir == "" {
		return "", fmt.Errorf("%w: no state directory given and no home directory to put the default in", ErrInvalid)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrInvalid, dir, err)
	}
	return abs, nil
}

// Layout names every path under one state directory (see the package
// comment for the map). It is a value: it creates, opens and checks
// nothing, and is safe to copy and to share.
type Layout struct {
	dir string
}

// At returns the layout of the state directory dir. dir is cleaned but not
// made absolute (callers that take it from a user resolve it first:
// Resolve, filepath.Abs).
func At(dir string) Layout { return Layout{dir: filepath.Clean(dir)} }

// Dir returns the state directory itself.
func (l Layout) Dir() string { return l.dir }

// Inventory returns the inventory database, <state>/inventory.db.
func (l Layout) Inventory() string { return filepath.Join(l.dir, "inventory.db") }

// InventoryLock returns the inventory writers' lock file,
// <state>/inventory.db.lock.
func (l Layout) InventoryLock() string { return l.Inventory() + ".lock" }

// Policy returns the operator profile the state directory uses when no
// other is named, <state>/policy.toml.
func (l Layout) Policy() string { return filepath.Join(l.dir, "policy.toml") }

// SkillsDir returns the directory of the installed skills and the trust
// store, <state>/skills.
func (l Layout) SkillsDir() string { return filepath.Join(l.dir, "skills") }

// TrustStore returns the default trust store, <state>/skills/trust-store.json.
func (l Layout) TrustStore() string { return filepath.Join(l.SkillsDir(), "trust-store.json") }

// SkillDir returns the directory of one skill's versions,
// <state>/skills/<skill_id>. id must already be a checked skill id.
func (l Layout) SkillDir(id string) string { return filepath.Join(l.SkillsDir(), id) }

// SkillLock returns the lock file of one skill, <state>/skills/<skill_id>/.lock.
func (l Layout) SkillLock(id string) string { return filepath.Join(l.SkillDir(id), ".lock") }

// VersionDir returns the directory of one installed version,
// <state>/skills/<skill_id>/<version>.
func (l Layout) VersionDir(id, version string) string {
	return filepath.Join(l.SkillDir(id), version)
}

// ModuleCache returns the precompiled-module cache, <state>/cache/modules.
func (l Layout) ModuleCache() string { return filepath.Join(l.dir, "cache", "modules") }

// StorageDB returns the skills' key-value store, <state>/storage/storage.db.
func (l Layout) StorageDB() string { return filepath.Join(l.dir, "storage", "storage.db") }

// SecretsDir returns the vault's directory, <state>/secrets.
func (l Layout) SecretsDir() string { return filepath.Join(l.dir, "secrets") }

// VaultFile returns the sealed secrets, <state>/secrets/vault.json.
func (l Layout) VaultFile() string { return filepath.Join(l.SecretsDir(), "vault.json") }

// VaultKey returns the vault's key file, <state>/secrets/vault.key.
func (l Layout) VaultKey() string { return filepath.Join(l.SecretsDir(), "vault.key") }

// VaultLock returns the vault writers' lock file, <state>/secrets/vault.lock.
func (l Layout) VaultLock() string { return filepath.Join(l.SecretsDir(), "vault.lock") }

// HooksDir returns the directory of the hook bindings, <state>/hooks.
func (l Layout) HooksDir() string { return filepath.Join(l.dir, "hooks") }

// HookBindings returns the hook bindings file, <state>/hooks/bindings.json.
func (l Layout) HookBindings() string { return filepath.Join(l.HooksDir(), "bindings.json") }

// HookBindingsLock returns the bindings writers' lock file,
// <state>/hooks/bindings.json.lock.
func (l Layout) HookBindingsLock() string { return l.HookBindings() + ".lock" }

// FeedDir returns the deny feed's directory, <state>/feed.
func (l Layout) FeedDir() string { return filepath.Join(l.dir, "feed") }

// DenyFeed returns the installed deny feed, <state>/feed/deny-feed.json
// (host/feed); its writers lock DenyFeed()+".lock".
func (l Layout) DenyFeed() string { return filepath.Join(l.FeedDir(), "deny-feed.json") }

// RunDir returns the host instances' runtime directory, <state>/run: the
// sidecars' sockets and temporary directories (host/rundir). The host uses
// it only when it is short enough for Unix socket paths; see the package
// comment.
func (l Layout) RunDir() string { return filepath.Join(l.dir, "run") }

// DaemonDir returns palyra-host's directory, <state>/daemon.
func (l Layout) DaemonDir() string { return filepath.Join(l.dir, "daemon") }

// DaemonToken returns the daemon's admin token file, <state>/daemon/admin-token.
func (l Layout) DaemonToken() string { return filepath.Join(l.DaemonDir(), "admin-token") }

// DaemonLock returns the lock the serving daemon holds, <state>/daemon/daemon.lock.
func (l Layout) DaemonLock() string { return filepath.Join(l.DaemonDir(), "daemon.lock") }

// DaemonInfo returns how to reach the running daemon, <state>/daemon/daemon.json.
func (l Layout) DaemonInfo() string { return filepath.Join(l.DaemonDir(), "daemon.json") }
