package trust_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/trust"
)

func TestFileLoadMissingAndWhitespace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := trust.OpenFile(filepath.Join(dir, "missing", "trust-store.json")).Load(ctx)
	if err != nil || len(s.Publishers()) != 0 {
		t.Fatalf("missing file: %v, %v", s, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load created the directory: %v", err)
	}
	p := filepath.Join(dir, "ws.json")
	if err := os.WriteFile(p, []byte("\n \t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := trust.OpenFile(p).Load(ctx); err != nil || len(s.Publishers()) != 0 {
		t.Fatalf("whitespace file: %v, %v", s, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := trust.OpenFile(p).Load(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled ctx: %v", err)
	}
}

func TestFileLoadErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"trusted_publishers":{"Acme":["`+echoKeyHex+`"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := trust.OpenFile(bad).Load(ctx)
	if !errors.Is(err, trust.ErrInvalidStore) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `"Acme"`) {
		t.Errorf("Load(bad) = %v", err)
	}
	// Update refuses to overwrite a store it cannot read.
	err = trust.OpenFile(bad).Update(ctx, func(s *trust.Store) (bool, error) { return true, nil })
	if !errors.Is(err, trust.ErrInvalidStore) {
		t.Errorf("Update(bad) = %v", err)
	}

	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, make([]byte, trust.MaxStoreSize+10), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = trust.OpenFile(big).Load(ctx)
	if !errors.Is(err, trust.ErrInvalidStore) || !strings.Contains(err.Error(), strconv.Itoa(trust.MaxStoreSize+10)) || !strings.Contains(err.Error(), strconv.Itoa(trust.MaxStoreSize)) {
		t.Errorf("Load(big) = %v", err)
	}
}

// TestFileDecideVectors runs the vector sequence against a file: TOFU pins
// and saves exactly trust-store.after-tofu-echo.json, then tofu_pinned, then
// the hook_skill key is a TOFU mismatch.
func TestFileDecideVectors(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state", "skills")
	f := trust.OpenFile(filepath.Join(dir, "trust-store.json"))

	if _, err := f.Decide(ctx, "acme", pub(0x01), false); !errors.Is(err, trust.ErrUntrustedPublisher) {
		t.Fatalf("without TOFU: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a rejected decision touched the disk: %v", err)
	}
	if d, err := f.Decide(ctx, "acme", pub(0x01), true); err != nil || d != trust.DecisionTOFUNewlyPinned {
		t.Fatalf("TOFU: %q, %v", d, err)
	}
	if got, want := string(readFile(t, f.Path())), string(vector(t, "trust-store.after-tofu-echo.json"))+"\n"; got != want {
		t.Errorf("saved store =\n%s\nwant\n%s", got, want)
	}
	if d, err := f.Decide(ctx, "acme", pub(0x01), false); err != nil || d != trust.DecisionTOFUPinned {
		t.Errorf("second verify: %q, %v", d, err)
	}
	if _, err := f.Decide(ctx, "acme", pub(0x07), true); !errors.Is(err, trust.ErrTOFUKeyMismatch) {
		t.Errorf("hook key: %v", err)
	}

	for path, want := range map[string]fs.FileMode{dir: 0o700, f.Path(): 0o600, f.Path() + ".lock": 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestFileDeciderAdapter(t *testing.T) {
	// The artifact package's TrustDecider, restated here.
	type trustDecider interface {
		Decide(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error)
	}
	f := trust.OpenFile(filepath.Join(t.TempDir(), "trust-store.json"))
	var d trustDecider = f.Decider()
	got, err := d.Decide(context.Background(), "acme", pub(0x01), true)
	if err != nil || got != string(trust.DecisionTOFUNewlyPinned) {
		t.Fatalf("Decide = %q, %v", got, err)
	}
	got, err = d.Decide(context.Background(), "acme", pub(0x07), false)
	if got != "" || errcode.Of(err) != "tofu_key_mismatch" {
		t.Errorf("Decide(other key) = %q, %v", got, err)
	}
}

func TestUpdate(t *testing.T) {
	ctx := context.Background()
	f := trust.OpenFile(filepath.Join(t.TempDir(), "trust-store.json"))
	// --trusted-publisher acme=<hex> is persisted.
	err := f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", strings.ToUpper(echoKeyHex)) })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(readFile(t, f.Path())), string(vector(t, "trust-store.allowlist-echo.json"))+"\n"; got != want {
		t.Errorf("store =\n%s\nwant\n%s", got, want)
	}
	fi1, _ := os.Stat(f.Path())

	// An error from fn writes nothing and is returned as is.
	errStop := errors.New("stop")
	err = f.Update(ctx, func(s *trust.Store) (bool, error) {
		_ = s.AddTrusted("beta", echoKeyHex)
		return true, errStop
	})
	if err != errStop {
		t.Errorf("Update error = %v, want errStop", err)
	}
	// changed=false writes nothing; neither does a change that is no change.
	for _, changed := range []bool{false, true} {
		err = f.Update(ctx, func(s *trust.Store) (bool, error) { return changed, s.AddTrusted("acme", echoKeyHex) })
		if err != nil {
			t.Fatal(err)
		}
	}
	fi2, _ := os.Stat(f.Path())
	if !os.SameFile(fi1, fi2) {
		t.Error("the store was rewritten although nothing changed")
	}
	s, _ := f.Load(ctx)
	if len(s.Publishers()) != 1 {
		t.Errorf("publishers = %+v", s.Publishers())
	}
}

// TestConcurrentGoroutines: eight goroutines, each with its own *File on
// the same path, pin eight different publishers; every pin survives.
// Meanwhile two goroutines race to pin one publisher to two keys: exactly
// one wins.
func TestConcurrentGoroutines(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "trust-store.json")
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n+2)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pubName := fmt.Sprintf("pub%d", i)
			d, err := trust.OpenFile(path).Decide(ctx, pubName, pub(byte(i+1)), true)
			if err == nil && d != trust.DecisionTOFUNewlyPinned {
				err = fmt.Errorf("%s: decision %q", pubName, d)
			}
			errs <- err
		}()
	}
	race := make(chan error, 2)
	for _, seed := range []byte{0x41, 0x42} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := trust.OpenFile(path).Decide(ctx, "contested", pub(seed), true)
			race <- err
		}()
	}
	wg.Wait()
	close(errs)
	close(race)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	var won, lost int
	for err := range race {
		switch {
		case err == nil:
			won++
		case errors.Is(err, trust.ErrTOFUKeyMismatch):
			lost++
		default:
			t.Errorf("contested pin: %v", err)
		}
	}
	if won != 1 || lost != 1 {
		t.Errorf("contested pin: %d won, %d lost; want 1 and 1", won, lost)
	}
	s, err := trust.OpenFile(path).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, ok := s.TOFUKey(fmt.Sprintf("pub%d", i)); !ok {
			t.Errorf("pin of pub%d lost", i)
		}
	}
}

const (
	helperEnv       = "PALYRA_TRUST_TEST_HELPER"
	helperPathEnv   = "PALYRA_TRUST_TEST_STORE"
	helperPrefixEnv = "PALYRA_TRUST_TEST_PREFIX"
	helperPins      = 5
)

// TestHelperProcess is not a real test: it is the child process of
// TestConcurrentProcesses (go-plugin's helperProcess pattern). It pins
// helperPins publishers named after its prefix, one Decide at a time.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process for TestConcurrentProcesses")
	}
	f := trust.OpenFile(os.Getenv(helperPathEnv))
	prefix := os.Getenv(helperPrefixEnv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range helperPins {
		d, err := f.Decide(ctx, fmt.Sprintf("%s.%d", prefix, i), pub(byte(i+1)), true)
		if err != nil || d != trust.DecisionTOFUNewlyPinned {
			t.Fatalf("pin %d: %q, %v", i, d, err)
		}
	}
}

// TestConcurrentProcesses: several processes pin different publishers in the
// same store at the same time; afterwards every pin is present.
func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "state", "trust-store.json")
	const children = 4
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmds := make([]*exec.Cmd, children)
	outs := make([]*strings.Builder, children)
	for i := range children {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), helperEnv+"=1", helperPathEnv+"="+path, fmt.Sprintf("%s=child%d", helperPrefixEnv, i))
		outs[i] = new(strings.Builder)
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("child %d: %v\n%s", i, err, outs[i])
		} else if !strings.Contains(outs[i].String(), "--- PASS: TestHelperProcess") {
			t.Errorf("child %d did not run the helper:\n%s", i, outs[i])
		}
	}
	s, err := trust.OpenFile(path).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Publishers()); got != children*helperPins {
		t.Errorf("%d publishers pinned, want %d", got, children*helperPins)
	}
	for c := range children {
		for i := range helperPins {
			if _, ok := s.TOFUKey(fmt.Sprintf("child%d.%d", c, i)); !ok {
				t.Errorf("pin child%d.%d lost", c, i)
			}
		}
	}
}

// TestAtomicWrites: while a writer keeps growing the store, a reader that
// reads the file without any lock always finds a complete, valid store.
func TestAtomicWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "trust-store.json")
	f := trust.OpenFile(path)
	if err := f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("seed", echoKeyHex) }); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var reads int
	var readErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			data, err := os.ReadFile(path)
			if err == nil {
				_, err = trust.Parse(data)
			}
			if err == nil && len(data) == 0 {
				err = errors.New("empty file observed")
			}
			if err != nil {
				readErr = err
				return
			}
			reads++
		}
	}()
	const writes = 100
	for i := range writes {
		if _, err := f.Decide(ctx, fmt.Sprintf("p%03d", i), pub(byte(i)), true); err != nil {
			t.Error(err)
			break
		}
	}
	close(done)
	wg.Wait()
	if readErr != nil {
		t.Fatalf("reader saw a broken store after %d reads: %v", reads, readErr)
	}
	s, err := f.Load(ctx)
	if err != nil || len(s.Publishers()) != writes+1 {
		t.Fatalf("final store: %d publishers, %v", len(s.Publishers()), err)
	}
	t.Logf("%d reads during %d writes", reads, writes)
}

// TestLockHonoursContext: while another writer holds the lock, an update
// with a short deadline gives up with an error wrapping both ErrLocked and
// context.DeadlineExceeded, and succeeds once the lock is free.
func TestLockHonoursContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trust-store.json")
	holding, release := make(chan struct{}), make(chan struct{})
	holderErr := make(chan error, 1)
	go func() {
		holderErr <- trust.OpenFile(path).Update(context.Background(), func(*trust.Store) (bool, error) {
			close(holding)
			<-release
			return false, nil
		})
	}()
	<-holding

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	called := false
	err := trust.OpenFile(path).Update(ctx, func(*trust.Store) (bool, error) { called = true; return false, nil })
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, trust.ErrLocked) || errcode.Of(err) != "trust_store_locked" {
		t.Errorf("Update under a held lock = %v, want ErrLocked and DeadlineExceeded", err)
	}
	if called {
		t.Error("fn ran without the lock")
	}
	_, err = trust.OpenFile(path).Decide(ctx, "acme", pub(1), true)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Decide under a held lock = %v", err)
	}

	close(release)
	if err := <-holderErr; err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if d, err := trust.OpenFile(path).Decide(ctx2, "acme", pub(1), true); err != nil || d != trust.DecisionTOFUNewlyPinned {
		t.Errorf("Decide after release = %q, %v", d, err)
	}
}

// TestDecideWaitsForAPinInFlight: a publisher refused by an unlocked read
// is asked again under the lock, so a reader never refuses a publisher
// whose pin a writer holding the lock is about to save (an install commits
// its skill under the lock and saves the pin just before releasing it; CI
// once saw a node list the skill and then refuse its publisher).
func TestDecideWaitsForAPinInFlight(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "trust-store.json")
	w, r := trust.OpenFile(path), trust.OpenFile(path)
	key := pub(9)
	if _, err := r.Decide(ctx, "acme", key, false); !errors.Is(err, trust.ErrUntrustedPublisher) {
		t.Fatalf("before any pin: %v, want untrusted_publisher", err)
	}
	inLock, release := make(chan struct{}), make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		wrote <- w.Update(ctx, func(s *trust.Store) (bool, error) {
			close(inLock)
			<-release
			d, err := s.Decide("acme", key, true)
			return d == trust.DecisionTOFUNewlyPinned, err
		})
	}()
	<-inLock
	got := make(chan error, 1)
	var dec trust.Decision
	go func() {
		var err error
		dec, err = r.Decide(ctx, "acme", key, false)
		got <- err
	}()
	// Give the reader time to make its unlocked read (of the store without
	// the pin) and reach the lock; were it later, it would only read the
	// pin directly: the test could not fail falsely.
	time.Sleep(50 * time.Millisecond)
	close(release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil || dec != trust.DecisionTOFUPinned {
		t.Fatalf("a read during the pin's write: %q, %v; want tofu_pinned", dec, err)
	}
}
