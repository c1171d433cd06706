package vault_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/palyra-go/palyra/host/vault"
)

const (
	helperStateEnv  = "PALYRA_VAULT_TEST_HELPER_STATE"
	helperWriterEnv = "PALYRA_VAULT_TEST_HELPER_WRITER"
	perProcess      = 8
)

// TestHelperProcess is a writer process of TestMultiProcessSet; it does
// nothing in a normal run.
func TestHelperProcess(t *testing.T) {
	state := os.Getenv(helperStateEnv)
	if state == "" {
		t.Skip("helper process only")
	}
	w, err := strconv.Atoi(os.Getenv(helperWriterEnv))
	if err != nil {
		t.Fatal(err)
	}
	// No key source: the processes race to create the key file, and the
	// lock makes exactly one of them do it.
	v, err := vault.Open(vault.Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	for i := range perProcess {
		n := vault.MustParseName(fmt.Sprintf("skill:p%d/k%d", w, i))
		if err := v.Set(context.Background(), n, []byte(fmt.Sprintf("proc-%d-%d", w, i))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMultiProcessSet runs writers in separate processes on one state
// directory: every write survives, and all share one key.
func TestMultiProcessSet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	state := t.TempDir()
	const procs = 3
	cmds := make([]*exec.Cmd, procs)
	for w := range procs {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperStateEnv+"="+state, helperWriterEnv+"="+strconv.Itoa(w))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[w] = cmd
	}
	for w, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer process %d: %v", w, err)
		}
	}
	v := openVault(t, vault.Config{StateDir: state})
	list, err := v.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != procs*perProcess {
		t.Fatalf("List has %d entries, want %d", len(list), procs*perProcess)
	}
	for w := range procs {
		for i := range perProcess {
			if got := mustGet(t, v, fmt.Sprintf("skill:p%d/k%d", w, i)); got != fmt.Sprintf("proc-%d-%d", w, i) {
				t.Errorf("skill:p%d/k%d = %q", w, i, got)
			}
		}
	}
}
