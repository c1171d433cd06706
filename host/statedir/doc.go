// Package statedir is the one map of a Palyra-Go state directory: where it
// is, and what lives where inside it.
//
// One state directory holds everything a host owns. The CLI (palyra), the
// daemon (palyra-host) and Go apps that embed the host (host.Open) share it,
// and every package that keeps a file there takes the file's path from a
// Layout, so this comment is the whole picture:
//
//	<state>/                          Layout.Dir (mode 0700 where created)
//	├── inventory.db                  Layout.Inventory: SQLite, the source of truth of what is installed (host/inventory)
//	├── inventory.db-wal, -shm        SQLite's WAL files, present while a writer has the database open
//	├── inventory.db.lock             Layout.InventoryLock: the writers' flock and change counter (host/inventory)
//	├── policy.toml                   Layout.Policy: the operator profile, when the operator wrote one (host/policy)
//	├── skills/                       Layout.SkillsDir (host/install)
//	│   ├── trust-store.json          Layout.TrustStore: the publisher trust store, Palyra's format (host/trust)
//	│   ├── trust-store.json.lock     the trust store writers' flock
//	│   └── <skill_id>/               Layout.SkillDir
//	│       ├── .lock                 Layout.SkillLock: the skill's flock (host/install)
//	│       ├── <version>/            Layout.VersionDir: one installed version (see host/install's Layout)
//	│       ├── .tmp-install-<random>/  staging and trash, never survives recovery
//	│       └── .replaced-<version>/  the old copy during a forced reinstall
//	├── cache/
//	│   └── modules/                  Layout.ModuleCache: precompiled modules (palyra-sidecar precompile)
//	├── storage/
//	│   └── storage.db                Layout.StorageDB: the skills' key-value store, SQLite (host/storage)
//	├── secrets/                      Layout.SecretsDir: the vault, mode 0700 (host/vault)
//	│   ├── vault.json                Layout.VaultFile: the sealed secrets
//	│   ├── vault.key                 Layout.VaultKey: the key, when no other key source is configured
//	│   └── vault.lock                Layout.VaultLock: the writers' flock
//	├── hooks/                        Layout.HooksDir
//	│   ├── bindings.json             Layout.HookBindings: hook bindings (host/hooks)
//	│   └── bindings.json.lock        Layout.HookBindingsLock: the writers' flock
//	├── feed/                         Layout.FeedDir
//	│   ├── deny-feed.json            Layout.DenyFeed: the installed signed deny feed (host/feed)
//	│   └── deny-feed.json.lock       its writers' flock
//	├── run/                          Layout.RunDir: the hosts' runtime files, mode 0700 (host/rundir), when short enough
//	│   ├── h<random>.lock            one live host instance's flock (held for the host's life)
//	│   └── h<random>/                that instance's directory
//	│       └── sc-<random>/, pc-<random>/  one child's private dir: its TMPDIR, go-plugin's socket dir
//	└── daemon/                       Layout.DaemonDir: palyra-host's files, mode 0700 (host/daemon)
//	    ├── admin-token               Layout.DaemonToken: the API's bearer token, mode 0600
//	    ├── daemon.lock               Layout.DaemonLock: held by the one daemon serving the directory
//	    └── daemon.json               Layout.DaemonInfo: how to reach the running daemon
//
// run/ is where the host's children (the sidecars, the precompile runs)
// keep their sockets and temporary files, so nothing of theirs goes to
// $TMPDIR. Unix socket paths are limited to 107 bytes, so run/ is used
// only while the state directory's path is at most 39 bytes; past that
// the same tree lives in $TMPDIR/palyra-<first 16 hex digits of the
// SHA-256 of the state directory's path> (or /tmp/palyra-<hash>), a
// private directory of the user that only this state directory's hosts
// use. Each writable host start removes every instance there whose flock
// it can take (its owner died, even by SIGKILL) and nothing else; the
// last host to close removes run/ itself. host/rundir has the details.
//
// Nothing is created by naming it: a Layout is only paths. Each owner creates
// its files on its first write, so commands that only read (palyra skills
// list, policy check, trust show, ...) leave the directory as they found it,
// or absent.
//
// # Where the state directory is
//
// Resolve chooses it from explicit Sources, in order: an explicit directory
// (the --state-dir flag, host.Config.StateDir), the value of the
// PALYRA_STATE_DIR environment variable, $XDG_STATE_HOME/palyra, and
// ~/.local/state/palyra. Library code never reads the environment: the
// commands under cmd/ fill Sources from theirs (cmd/internal/cliconfig), and
// an embedding application passes host.Config.StateDir.
package statedir
