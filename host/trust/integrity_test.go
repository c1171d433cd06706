package trust_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/host/vault"
)

// vaultKeyFn returns a WithVaultKey function answering key, or
// ErrNoVaultKey when key is nil.
func vaultKeyFn(key []byte) func(context.Context) ([]byte, error) {
	return func(context.Context) ([]byte, error) {
		if key == nil {
			return nil, fmt.Errorf("test: %w", trust.ErrNoVaultKey)
		}
		return key, nil
	}
}

// addByHand adds an allowlisted key to the store file the way an editor
// would: read the JSON, change it, write it back, without the seal.
func addByHand(t *testing.T, path, publisher, keyHex string) {
	t.Helper()
	s, err := trust.Parse(readFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddTrusted(publisher, keyHex); err != nil {
		t.Fatal(err)
	}
	data, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// mustLoad loads f and fails the test on an error.
func mustLoad(t *testing.T, f *trust.File) *trust.Store {
	t.Helper()
	s, err := f.Load(context.Background())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return s
}

// TestIntegrityLegitimateChangesKeepLoading: every change made through the
// File (allowlist add, TOFU pin, rotation, a no-op update) is sealed in the
// same write, so the store keeps loading, with either key source.
func TestIntegrityLegitimateChangesKeepLoading(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		opts   []trust.Option
		source string
	}{
		{"key file", nil, trust.KeySourceKeyFile},
		{"vault", []trust.Option{trust.WithVaultKey(vaultKeyFn(bytes.Repeat([]byte{9}, 32)))}, trust.KeySourceVault},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trust-store.json")
			f := trust.OpenFile(path, tc.opts...)
			if err := f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", hexOf(1)) }); err != nil {
				t.Fatal(err)
			}
			mustLoad(t, f)
			if d, err := f.Decide(ctx, "beta", pub(2), true); err != nil || d != trust.DecisionTOFUNewlyPinned {
				t.Fatalf("pin: %v %v", d, err)
			}
			mustLoad(t, f)
			if _, err := f.ApplyRotation(ctx, mustRotation(t, "acme", 1, 3, time.Now().Add(-time.Minute))); err != nil {
				t.Fatal(err)
			}
			s := mustLoad(t, f)
			if got := s.TrustedKeys("acme"); len(got) != 1 || got[0] != hexOf(3) {
				t.Fatalf("after rotation acme trusts %v", got)
			}
			if err := f.Update(ctx, func(*trust.Store) (bool, error) { return false, nil }); err != nil {
				t.Fatal(err)
			}
			r, err := f.Review(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != trust.IntegrityIntact || r.KeySource != tc.source || len(r.Changes) != 0 {
				t.Fatalf("review %+v, want intact with key source %s", r, tc.source)
			}
			if _, err := os.Stat(f.IntegrityKeyPath()); (err == nil) != (tc.source == trust.KeySourceKeyFile) {
				t.Fatalf("key file %s: %v (source %s)", f.IntegrityKeyPath(), err, tc.source)
			}
			if tc.source == trust.KeySourceKeyFile {
				st, _ := os.Stat(f.IntegrityKeyPath())
				if st.Mode().Perm() != 0o600 {
					t.Fatalf("key file mode %v", st.Mode())
				}
			}
		})
	}
}

// TestIntegrityTamperRefusedUntilAccepted: a key added by hand is refused
// with trust_store_tampered naming the file and accept-changes; the review
// shows exactly the added key; declining changes nothing; accepting
// re-seals and the store loads with the new key.
func TestIntegrityTamperRefusedUntilAccepted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "trust-store.json")
	f := trust.OpenFile(path, trust.WithVaultKey(vaultKeyFn(bytes.Repeat([]byte{5}, 32))))
	if err := f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", hexOf(1)) }); err != nil {
		t.Fatal(err)
	}
	addByHand(t, path, "evil", hexOf(4))

	_, err := f.Load(ctx)
	var te *trust.TamperedError
	if !errors.Is(err, trust.ErrTampered) || !errors.As(err, &te) || errcode.Of(err) != "trust_store_tampered" {
		t.Fatalf("load of a hand-edited store: %v, want trust_store_tampered", err)
	}
	for _, want := range []string{path, "palyra trust accept-changes", "1 keys added"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// Every path that reads the store fails closed.
	if _, err := f.Decide(ctx, "evil", pub(4), false); !errors.Is(err, trust.ErrTampered) {
		t.Errorf("decide: %v", err)
	}
	if err := f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("other", hexOf(2)) }); !errors.Is(err, trust.ErrTampered) {
		t.Errorf("update of a tampered store: %v (an update must not launder the edit)", err)
	}
	if _, err := f.ApplyRotation(ctx, mustRotation(t, "acme", 1, 3, time.Now().Add(-time.Minute))); !errors.Is(err, trust.ErrTampered) {
		t.Errorf("rotation: %v", err)
	}

	wantChanges := []trust.Change{{Publisher: "evil", Trust: "allowlisted", Change: trust.ChangeAdded, NewKey: hexOf(4)}}
	r, accepted, err := f.AcceptChanges(ctx, func(r *trust.Review) (bool, error) { return false, nil })
	if err != nil || accepted {
		t.Fatalf("declined accept: %v %v", accepted, err)
	}
	if r.Status != trust.IntegrityTampered || !r.BaselineVerified || fmt.Sprint(r.Changes) != fmt.Sprint(wantChanges) {
		t.Fatalf("review %+v, want %v", r, wantChanges)
	}
	if _, err := f.Load(ctx); !errors.Is(err, trust.ErrTampered) {
		t.Fatalf("after a declined accept: %v", err)
	}
	var seen []trust.Change
	if _, accepted, err = f.AcceptChanges(ctx, func(r *trust.Review) (bool, error) { seen = r.Changes; return true, nil }); err != nil || !accepted {
		t.Fatalf("accept: %v %v", accepted, err)
	}
	if fmt.Sprint(seen) != fmt.Sprint(wantChanges) {
		t.Fatalf("confirm saw %v", seen)
	}
	s := mustLoad(t, f)
	if d, err := s.Decide("evil", pub(4), false); err != nil || d != trust.DecisionAllowlisted {
		t.Fatalf("accepted key: %v %v", d, err)
	}
	// An intact store needs no accept: confirm is not called.
	if _, accepted, err := f.AcceptChanges(ctx, func(*trust.Review) (bool, error) { t.Fatal("confirm called"); return false, nil }); err != nil || accepted {
		t.Fatalf("accept of an intact store: %v %v", accepted, err)
	}
}

// TestIntegrityTamperCases: every way the store or its seal can change
// behind the host's back is refused, and the review says what changed.
func TestIntegrityTamperCases(t *testing.T) {
	ctx := context.Background()
	vk := bytes.Repeat([]byte{7}, 32)
	for _, tc := range []struct {
		name    string
		edit    func(t *testing.T, f *trust.File)
		reopen  []trust.Option // nil: the same options
		changes string
	}{
		{"key removed", func(t *testing.T, f *trust.File) {
			must(t, os.WriteFile(f.Path(), []byte(`{"trusted_publishers":{},"tofu_publishers":{"beta":"`+hexOf(2)+`"}}`), 0o600))
		}, nil, "removed"},
		{"tofu pin moved", func(t *testing.T, f *trust.File) {
			must(t, os.WriteFile(f.Path(), []byte(`{"trusted_publishers":{"acme":["`+hexOf(1)+`"]},"tofu_publishers":{"beta":"`+hexOf(6)+`"}}`), 0o600))
		}, nil, "changed"},
		// WithVaultKey alone has no vault to hold the "sealed once"
		// marker: TestIntegritySealDeleted covers the marker.
		{"seal deleted", func(t *testing.T, f *trust.File) { must(t, os.Remove(f.SealPath())) }, nil, "unsealed"},
		{"seal garbage", func(t *testing.T, f *trust.File) { must(t, os.WriteFile(f.SealPath(), []byte("{"), 0o600)) }, nil, "added"},
		{"seal MAC forged", func(t *testing.T, f *trust.File) {
			data := readFile(t, f.SealPath())
			i := bytes.Index(data, []byte(`"mac": "`)) + len(`"mac": "`)
			data[i] ^= 1
			must(t, os.WriteFile(f.SealPath(), data, 0o600))
		}, nil, "added"},
		{"vault key gone", func(*testing.T, *trust.File) {}, []trust.Option{trust.WithVaultKey(vaultKeyFn(nil))}, "added"},
		{"other vault key", func(*testing.T, *trust.File) {}, []trust.Option{trust.WithVaultKey(vaultKeyFn(bytes.Repeat([]byte{8}, 32)))}, "added"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trust-store.json")
			opts := []trust.Option{trust.WithVaultKey(vaultKeyFn(vk))}
			f := trust.OpenFile(path, opts...)
			must(t, f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", hexOf(1)) }))
			if _, err := f.Decide(ctx, "beta", pub(2), true); err != nil {
				t.Fatal(err)
			}
			tc.edit(t, f)
			if tc.reopen != nil {
				f = trust.OpenFile(path, tc.reopen...)
			}
			if tc.changes == "unsealed" {
				// A deleted seal reads as a store from before integrity:
				// it is adopted (see TestIntegrityAdoptsUnsealedStore).
				r, err := f.Review(ctx)
				if err != nil || r.Status != trust.IntegrityUnsealed {
					t.Fatalf("review %+v %v", r, err)
				}
				return
			}
			_, err := f.Load(ctx)
			var te *trust.TamperedError
			if !errors.As(err, &te) || !errors.Is(err, trust.ErrTampered) {
				t.Fatalf("load: %v, want trust_store_tampered", err)
			}
			found := false
			for _, c := range te.Review.Changes {
				found = found || c.Change == tc.changes
			}
			if !found {
				t.Fatalf("changes %v have no %q", te.Review.Changes, tc.changes)
			}
		})
	}
}

// TestIntegrityAdoptsUnsealedStore: a store written before integrity (or
// by Palyra) has no seal: the first load adopts it once, sealing it as it
// is, and a later hand edit is refused.
func TestIntegrityAdoptsUnsealedStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "trust-store.json")
	must(t, os.WriteFile(path, readFile(t, "../../testdata/trust/store-mixed.json"), 0o600))
	f := trust.OpenFile(path)
	want, err := trust.Parse(readFile(t, "../../testdata/trust/store-mixed.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := mustLoad(t, f)
	a, _ := s.Marshal()
	b, _ := want.Marshal()
	if !bytes.Equal(a, b) {
		t.Fatalf("adopted store differs:\n%s\n%s", a, b)
	}
	if _, err := os.Stat(f.SealPath()); err != nil {
		t.Fatalf("no seal after adoption: %v", err)
	}
	if r, err := f.Review(ctx); err != nil || r.Status != trust.IntegrityIntact {
		t.Fatalf("after adoption: %+v %v", r, err)
	}
	addByHand(t, path, "evil", hexOf(4))
	if _, err := f.Load(ctx); !errors.Is(err, trust.ErrTampered) {
		t.Fatalf("edit after adoption: %v", err)
	}
	// An empty or missing store needs no seal and makes none on load.
	empty := trust.OpenFile(filepath.Join(t.TempDir(), "trust-store.json"))
	mustLoad(t, empty)
	if _, err := os.Stat(empty.SealPath()); err == nil {
		t.Fatal("load of a missing store wrote a seal")
	}
}

// TestIntegrityCrashBetweenWrites: a crash after the seal naming the old
// and new content is written but before the store is replaced leaves a
// store that loads (the old content), and so does one after the store is
// replaced but before the seal is trimmed.
func TestIntegrityCrashBetweenWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "trust-store.json")
	f := trust.OpenFile(path)
	must(t, f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", hexOf(1)) }))
	oldStore := readFile(t, path)
	oldSeal := readFile(t, f.SealPath())
	must(t, f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", hexOf(2)) }))
	newStore := readFile(t, path)
	// The intermediate seal names the old and the new content.
	both := mergeSeals(t, oldSeal, readFile(t, f.SealPath()))
	for _, store := range [][]byte{oldStore, newStore} {
		must(t, os.WriteFile(path, store, 0o600))
		must(t, os.WriteFile(f.SealPath(), both, 0o600))
		if _, err := f.Load(ctx); err != nil {
			t.Fatalf("after a crash mid-write: %v", err)
		}
	}
}

// mergeSeals joins the sealed entries of two seal files (same key).
func mergeSeals(t *testing.T, a, b []byte) []byte {
	t.Helper()
	var sa, sb map[string]any
	must(t, json.Unmarshal(a, &sa))
	must(t, json.Unmarshal(b, &sb))
	sa["sealed"] = append(sa["sealed"].([]any), sb["sealed"].([]any)...)
	out, err := json.Marshal(sa)
	must(t, err)
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestDiff lists allowlist and pin changes by publisher.
func TestDiff(t *testing.T) {
	old, _ := trust.Parse([]byte(`{"trusted_publishers":{"a":["` + hexOf(1) + `","` + hexOf(2) + `"]},"tofu_publishers":{"p":"` + hexOf(3) + `","q":"` + hexOf(4) + `"}}`))
	nw, _ := trust.Parse([]byte(`{"trusted_publishers":{"a":["` + hexOf(1) + `"],"b":["` + hexOf(5) + `"]},"tofu_publishers":{"p":"` + hexOf(6) + `","r":"` + hexOf(4) + `"}}`))
	got := trust.Diff(old, nw)
	want := []trust.Change{
		{Publisher: "a", Trust: "allowlisted", Change: "removed", OldKey: hexOf(2)},
		{Publisher: "b", Trust: "allowlisted", Change: "added", NewKey: hexOf(5)},
		{Publisher: "p", Trust: "tofu", Change: "changed", OldKey: hexOf(3), NewKey: hexOf(6)},
		{Publisher: "q", Trust: "tofu", Change: "removed", OldKey: hexOf(4)},
		{Publisher: "r", Trust: "tofu", Change: "added", NewKey: hexOf(4)},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("diff\n%v\nwant\n%v", got, want)
	}
	if d := trust.Diff(old, old); len(d) != 0 {
		t.Fatalf("diff of a store with itself: %v", d)
	}
}

// TestIntegrityKeySourceChange: a store sealed with the key file keeps
// loading once the vault gets a key of its own file, and is re-sealed with
// the vault subkey at its next change; under a configured vault key
// ($PALYRA_VAULT_KEY) a key-file seal is refused, so nobody who can only
// write the state directory can re-seal the store with a key file.
func TestIntegrityKeySourceChange(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	path := filepath.Join(t.TempDir(), "trust-store.json")
	v, err := vault.Open(vault.Config{StateDir: state})
	must(t, err)
	f := trust.OpenFile(path, trust.WithVault(v))
	must(t, f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", hexOf(1)) }))
	if r, _ := f.Review(ctx); r.KeySource != trust.KeySourceKeyFile {
		t.Fatalf("no vault key: sealed with %q", r.KeySource)
	}
	// The first secret creates <state>/secrets/vault.key.
	n, err := vault.ParseName("skill:acme.x/token")
	must(t, err)
	must(t, v.Set(ctx, n, []byte("v")))
	f = trust.OpenFile(path, trust.WithVault(v))
	mustLoad(t, f)
	must(t, f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", hexOf(2)) }))
	if r, _ := f.Review(ctx); r.KeySource != trust.KeySourceVault || r.Status != trust.IntegrityIntact {
		t.Fatalf("after a change with a vault key: %+v", r)
	}

	// A configured vault key refuses a key-file seal.
	path2 := filepath.Join(t.TempDir(), "trust-store.json")
	must(t, trust.OpenFile(path2).Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", hexOf(1)) }))
	configured, err := vault.Open(vault.Config{StateDir: t.TempDir(), Key: bytes.Repeat([]byte{4}, 32)})
	must(t, err)
	_, err = trust.OpenFile(path2, trust.WithVault(configured)).Load(ctx)
	if !errors.Is(err, trust.ErrTampered) || !strings.Contains(err.Error(), "vault key is configured") {
		t.Fatalf("key-file seal under a configured vault key: %v", err)
	}
}

// TestIntegrityUnlockedReadsDuringWrites: a Load (no lock) while another
// writer keeps changing the store never takes the store and a seal from
// two different writes for tampering.
func TestIntegrityUnlockedReadsDuringWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "trust-store.json")
	w := trust.OpenFile(path)
	if err := w.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("seed", echoKeyHex) }); err != nil {
		t.Fatal(err)
	}
	const writes = 150
	done := make(chan error, 1)
	go func() {
		for i := range writes {
			name := fmt.Sprintf("w%d", i)
			if _, err := w.Decide(ctx, name, pub(byte(i%250+1)), true); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	r := trust.OpenFile(path)
	reads := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
			if reads == 0 {
				t.Fatal("no read overlapped the writes")
			}
			return
		default:
		}
		if _, err := r.Load(ctx); err != nil {
			t.Fatalf("read %d during the writes: %v", reads, err)
		}
		reads++
	}
}

// TestIntegritySealDeleted: deleting the seal of a sealed store does not
// make it look unsealed (which the first load would adopt): the "sealed
// once" marker held with the key (the key file for a key-file seal, a
// vault entry for a vault seal) makes it trust_store_tampered, a hand edit
// made with the deletion included, and accept-changes recovers it. A store
// that was never sealed is still adopted.
func TestIntegritySealDeleted(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		vault  func(t *testing.T) *vault.Vault // nil: no vault (key file)
		source string
		marker string
	}{
		{"key file", nil, trust.KeySourceKeyFile, "integrity key file"},
		{"vault key file", func(t *testing.T) *vault.Vault {
			v, err := vault.Open(vault.Config{StateDir: t.TempDir()})
			must(t, err)
			n, err := vault.ParseName("skill:acme.x/token")
			must(t, err)
			must(t, v.Set(ctx, n, []byte("v"))) // creates the vault key file
			return v
		}, trust.KeySourceVault, "sealed marker"},
		{"configured vault key", func(t *testing.T) *vault.Vault {
			v, err := vault.Open(vault.Config{StateDir: t.TempDir(), Key: bytes.Repeat([]byte{5}, 32)})
			must(t, err)
			return v
		}, trust.KeySourceVault, "sealed marker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "trust-store.json")
			var opts []trust.Option
			var v *vault.Vault
			if tc.vault != nil {
				v = tc.vault(t)
				opts = append(opts, trust.WithVault(v))
			}
			f := trust.OpenFile(path, opts...)
			must(t, f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", hexOf(1)) }))
			if r, err := f.Review(ctx); err != nil || r.KeySource != tc.source || r.Status != trust.IntegrityIntact {
				t.Fatalf("sealed: %+v %v, want %s", r, err, tc.source)
			}
			if v != nil {
				ok, err := v.Has(ctx, trust.SealedMarkerName(path))
				if err != nil || !ok {
					t.Fatalf("vault marker after a vault seal: %v %v", ok, err)
				}
				if _, err := os.Stat(f.IntegrityKeyPath()); err == nil {
					t.Fatal("a vault seal created the key file")
				}
			}
			must(t, os.Remove(f.SealPath()))
			addByHand(t, path, "evil", hexOf(4))

			f = trust.OpenFile(path, opts...)
			r, err := f.Review(ctx)
			if err != nil || r.Status != trust.IntegrityTampered || !strings.Contains(r.Reason, tc.marker) || !strings.Contains(r.Reason, "missing") {
				t.Fatalf("review after the seal was deleted: %+v %v", r, err)
			}
			_, err = f.Load(ctx)
			var te *trust.TamperedError
			if !errors.As(err, &te) || errcode.Of(err) != "trust_store_tampered" {
				t.Fatalf("load after the seal was deleted: %v, want trust_store_tampered", err)
			}
			if _, err := os.Stat(f.SealPath()); err == nil {
				t.Fatal("a refused load wrote a seal (adopted the store)")
			}
			if err := f.Update(ctx, func(s *trust.Store) (bool, error) { return true, s.AddTrusted("acme", hexOf(2)) }); !errors.Is(err, trust.ErrTampered) {
				t.Fatalf("update of the tampered store: %v", err)
			}
			// accept-changes (after review) recovers.
			_, accepted, err := f.AcceptChanges(ctx, func(r *trust.Review) (bool, error) {
				for _, c := range r.Changes {
					if c.Publisher == "evil" && c.Change == trust.ChangeAdded {
						return true, nil
					}
				}
				return false, fmt.Errorf("the review %+v does not show the added key", r.Changes)
			})
			if err != nil || !accepted {
				t.Fatalf("accept-changes: %v %v", accepted, err)
			}
			if s := mustLoad(t, f); len(s.Publishers()) != 2 {
				t.Fatalf("after accept-changes: %+v", s.Publishers())
			}
		})
	}

	// Never sealed: no key file, no marker: adopted as before.
	path := filepath.Join(t.TempDir(), "trust-store.json")
	must(t, os.WriteFile(path, readFile(t, "../../testdata/trust/store-mixed.json"), 0o600))
	v, err := vault.Open(vault.Config{StateDir: t.TempDir(), Key: bytes.Repeat([]byte{5}, 32)})
	must(t, err)
	f := trust.OpenFile(path, trust.WithVault(v))
	if r, err := f.Review(ctx); err != nil || r.Status != trust.IntegrityUnsealed {
		t.Fatalf("never sealed: %+v %v", r, err)
	}
	mustLoad(t, f)
}
