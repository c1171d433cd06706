// Package doctor checks a Palyra-Go installation the way an operator
// would by hand, for `palyra doctor`: the C compiler (to build the
// sidecar), the sidecar binary and whether it matches, the kernel's
// support for the sidecar hardening, the state directory's ownership and
// modes, the trust store, the vault key, the daemon, the deployment
// posture, and the installed deny feed (it must verify against the trust
// store, or every audit fails). Each check is one Check: ok, warn or fail, what it found and
// what to do.
//
// The package reads no environment: the command resolves every source
// (flags, $CC, $PATH, $PALYRA_*) into Config.
//
//	rep := doctor.Run(ctx, doctor.Config{StateDir: dir, Sidecar: path, ...})
//	rep.WriteText(os.Stdout)
//	if !rep.OK { os.Exit(1) }
package doctor
