package inventory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
)

// Environment of the helper processes (go-plugin's helperProcess pattern:
// the test binary re-executes itself with -test.run=TestHelperProcess).
const (
	envHelper = "PALYRA_INVENTORY_TEST_HELPER"
	envDB     = "PALYRA_INVENTORY_TEST_DB"
	envWorker = "PALYRA_INVENTORY_TEST_WORKER"
	envStart  = "PALYRA_INVENTORY_TEST_START"
)

const (
	processes      = 4
	rowsPerProcess = 50
)

// TestHelperProcess is not a test: it is the body of a child process
// started by TestMultiProcess. It opens the shared database, waits for the
// start signal so that every child writes at once, and installs
// rowsPerProcess skills, each in its own transaction.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(envHelper) != "1" {
		return
	}
	ctx := context.Background()
	worker, err := strconv.Atoi(os.Getenv(envWorker))
	if err != nil {
		t.Fatalf("bad %s: %v", envWorker, err)
	}
	waitForFile(t, os.Getenv(envStart))
	db, err := Open(ctx, os.Getenv(envDB))
	if err != nil {
		t.Fatalf("child %d: Open: %v", worker, err)
	}
	defer db.Close()
	for i := range rowsPerProcess {
		if err := installSkill(ctx, db, fmt.Sprintf("p%d.s%d", worker, i)); err != nil {
			t.Fatalf("child %d: install %d: %v", worker, i, err)
		}
		if _, err := db.Skill(ctx, fmt.Sprintf("p%d.s%d", worker, i), ""); err != nil {
			t.Fatalf("child %d: read back %d: %v", worker, i, err)
		}
	}
}

func waitForFile(t *testing.T, path string) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no start signal %s", path)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestMultiProcess runs 4 child processes that write into the same
// database at once. Every row lands and no "database is locked" escapes:
// writers take the lock up front (BEGIN IMMEDIATE) and wait for each other
// (busy timeout). In the "fresh" case the children also race to create and
// migrate the file.
func TestMultiProcess(t *testing.T) {
	if os.Getenv(envHelper) == "1" {
		t.Skip("in a helper process")
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, fresh := range []bool{false, true} {
		t.Run(fmt.Sprintf("fresh=%v", fresh), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state", "inventory.db")
			start := filepath.Join(dir, "start")
			if !fresh {
				db := openAt(t, path) // migrated before the children start
				_ = db.Close()
			}

			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				outs []string
			)
			cmds := make([]*exec.Cmd, processes)
			bufs := make([]*bytes.Buffer, processes)
			for w := range processes {
				cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
				cmd.Env = append(os.Environ(),
					envHelper+"=1", envDB+"="+path, envWorker+"="+strconv.Itoa(w), envStart+"="+start)
				bufs[w] = new(bytes.Buffer)
				cmd.Stdout, cmd.Stderr = bufs[w], bufs[w]
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds[w] = cmd
			}
			if err := os.WriteFile(start, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			for w, cmd := range cmds {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := cmd.Wait()
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						outs = append(outs, fmt.Sprintf("child %d: %v\n%s", w, err, bufs[w]))
					}
					if strings.Contains(bufs[w].String(), "database is locked") {
						outs = append(outs, fmt.Sprintf("child %d saw SQLITE_BUSY:\n%s", w, bufs[w]))
					}
				}()
			}
			wg.Wait()
			for _, o := range outs {
				t.Error(o)
			}

			db := openAt(t, path)
			for table, per := range map[string]int{"skills": 1, "skill_status": 1, "skill_events": 2} {
				if n, want := count(t, db, `SELECT count(*) FROM `+table), processes*rowsPerProcess*per; n != want {
					t.Errorf("%s has %d rows, want %d", table, n, want)
				}
			}
			if n := count(t, db, `SELECT count(*) FROM schema_migrations`); n != SchemaVersion() {
				t.Errorf("schema_migrations has %d rows, want %d", n, SchemaVersion())
			}
		})
	}
}

// TestBusy: a writer that cannot get the lock within the busy timeout
// fails with ErrBusy, whether the holder is a cooperating DB (the flock) or
// a foreign SQLite writer (SQLite's lock); a cancelled ctx ends the wait.
func TestBusy(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "inventory.db")
	holder := openAt(t, path)
	waiter := openAt(t, path, WithBusyTimeout(50*time.Millisecond))

	t.Run("cooperating holder", func(t *testing.T) {
		held := make(chan struct{})
		release := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- holder.Update(ctx, func(*Tx) error {
				close(held)
				<-release
				return nil
			})
		}()
		defer func() {
			close(release)
			if err := <-done; err != nil {
				t.Errorf("holder: %v", err)
			}
		}()
		<-held
		err := waiter.Update(ctx, func(*Tx) error { return nil })
		if !errors.Is(err, ErrBusy) || errcode.Of(err) != "inventory_busy" {
			t.Errorf("Update while held = %v, want ErrBusy", err)
		}
		cctx, cancel := context.WithCancel(ctx)
		go func() { time.Sleep(10 * time.Millisecond); cancel() }()
		err = openAt(t, path).Update(cctx, func(*Tx) error { return nil })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Update with cancelled ctx = %v, want context.Canceled", err)
		}
	})

	t.Run("foreign writer", func(t *testing.T) {
		conn, err := holder.sql.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
			t.Fatal(err)
		}
		err = waiter.Update(ctx, func(*Tx) error { return nil })
		if !errors.Is(err, ErrBusy) {
			t.Errorf("Update during a foreign write = %v, want ErrBusy", err)
		}
		if _, err := conn.ExecContext(ctx, `ROLLBACK`); err != nil {
			t.Fatal(err)
		}
		if err := waiter.Update(ctx, func(*Tx) error { return nil }); err != nil {
			t.Errorf("Update after release: %v", err)
		}
	})
}
