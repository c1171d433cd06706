// Package rundir keeps the host's runtime files (the sidecars' go-plugin
// sockets and the private TMPDIR of every child process) where the host
// owns them, and removes what dead hosts left there, and only that.
//
// # Instances
//
// Every writable host (host.Open, and so palyra-host and the palyra CLI)
// that runs sidecars holds one Instance for its life: a directory
// h<random> in the run root, next to a lock file h<random>.lock that the
// host keeps flock'ed (LOCK_EX) until Close. The supervisor makes each
// child's private directory inside it, so after any death of the host,
// SIGKILL included, everything it left is one directory whose lock nobody
// holds. The kernel drops a flock when its last holder dies, whatever
// killed it; the lock file descriptor is close-on-exec, so no child keeps
// its parent's lock alive.
//
// Each writable host start sweeps: an instance whose lock it can take
// belongs to a dead owner and is removed (the directory first, then the
// lock file, under the lock); an instance whose lock is held is left
// alone, so the daemon, a CLI host and library hosts on one state
// directory never remove each other's live directories. flock locks
// belong to the open file, not the process, so two hosts of one process
// exclude each other the same way.
//
// The lock is a sibling of the directory, not inside it: the lock file is
// created (O_EXCL) and locked before the directory exists, and a creator
// checks after locking that the path still names the file it locked
// (a sweeper may have taken and removed a lock file in the instant between
// its creation and its locking), so a directory whose lock file is absent
// never belongs to a live host and is removed too.
//
// # Where the run root is
//
// Unix socket paths are limited to 107 bytes (108 with the final NUL), and
// the deepest socket path is
//
//	<root>/h<10 digits>/sc-<10 digits>/plugin-dir<10 digits>/plugin<10 digits>
//
// (the instance, the child's private directory made by host/internal/launch,
// and go-plugin's socket directory and socket), MaxRootLen bytes at most
// for the root. Root chooses, in order, the first that fits:
//
//  1. <state>/run (statedir.Layout.RunDir): everything under the state
//     directory, when the state directory's path is at most MaxRootLen-4
//     bytes (39, enough for ~/.local/state/palyra of most users);
//  2. <os.TempDir()>/palyra-<hash>, hash being the first 16 hex digits of
//     the SHA-256 of the state directory's path: one private directory per
//     state directory, so sweeps of one state directory never touch
//     another's;
//  3. /tmp/palyra-<hash>, when even $TMPDIR is too long.
//
// A root is used only when it is a real directory (not a symbolic link) of
// the effective user with no group or other permission bits; a root made
// by another user in a shared /tmp makes Root's caller fail with
// ErrUnusable instead of putting sockets there. Sweep and Leftovers look
// at every candidate root of a state directory (<state>/run, the given
// $TMPDIR's and /tmp's), not only the one Root picks; what a dead host left
// under a $TMPDIR other than the sweeping host's and /tmp is found only by
// a later host started with that $TMPDIR. The root itself is removed by
// the last instance that closes, or by a sweep that empties it (rmdir of
// an empty directory).
package rundir
