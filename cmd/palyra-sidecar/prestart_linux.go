package main

// The capability and no_new_privs steps of the sidecar's hardening are
// per-thread attributes. Done from Go, once the runtime has started its
// threads, each step is a psx broadcast to every thread: 44 of them on a
// sidecar running as root, which took 5 to 165 ms of every sidecar start
// on this project's 2-core machine. Here they run before the Go runtime
// starts a thread (a constructor of the executable), once, on the only
// thread there is; every thread made later inherits them. Failures are
// ignored on purpose: package harden's Apply checks every thread
// (/proc/self/task) and does, through psx, whatever step a thread still
// lacks, and it fails closed.
//
// Any argument that sets the harden flag (--harden=false turns the
// hardening off; the supervisor passes none when it is on) leaves it all
// to Apply: the constructor never hardens a sidecar that was told not to.

/*
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

__attribute__((constructor)) static void palyra_sidecar_prestart(int argc, char **argv, char **envp) {
	(void)envp;
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "-harden=", 8) == 0 || strncmp(argv[i], "--harden=", 9) == 0) {
			return;
		}
	}
	for (int c = 0; c < 64; c++) {
		int set = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		if (set < 0) {
			break; // past the kernel's last capability
		}
		if (set == 1 && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) {
			break; // no CAP_SETPCAP: an unprivileged sidecar keeps its bounding set
		}
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[2] = {{0, 0, 0}, {0, 0, 0}};
	syscall(SYS_capset, &hdr, data);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}
*/
import "C"
