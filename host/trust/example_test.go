package trust_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/trust"
)

// Trust on first use against a store file: the first verify pins the
// publisher's key and saves it, the next one finds the pin, and a different
// key is refused.
func ExampleFile_Decide() {
	dir, err := os.MkdirTemp("", "trust-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store := trust.OpenFile(filepath.Join(dir, "skills", "trust-store.json"))
	ctx := context.Background()

	// The key that signed acme's artifact (seed 0x01×32, the derived vector).
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x01}, 32)).Public().(ed25519.PublicKey)

	d, err := store.Decide(ctx, "acme", key, true) // --allow-tofu
	fmt.Println(d, err)
	d, err = store.Decide(ctx, "acme", key, false)
	fmt.Println(d, err)

	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x07}, 32)).Public().(ed25519.PublicKey)
	_, err = store.Decide(ctx, "acme", other, true)
	fmt.Println(errors.Is(err, trust.ErrTOFUKeyMismatch), errcode.Of(err))

	data, _ := os.ReadFile(store.Path())
	fmt.Print(string(data))
	// Output:
	// tofu_newly_pinned <nil>
	// tofu_pinned <nil>
	// true tofu_key_mismatch
	// {
	//   "trusted_publishers": {},
	//   "tofu_publishers": {
	//     "acme": "8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"
	//   }
	// }
}

// --trusted-publisher acme=<hex>: add a key to the allowlist and persist it.
func ExampleFile_Update() {
	dir, err := os.MkdirTemp("", "trust-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store := trust.OpenFile(filepath.Join(dir, "trust-store.json"))

	err = store.Update(context.Background(), func(s *trust.Store) (bool, error) {
		return true, s.AddTrusted("acme", "8A88E3DD7409F195FD52DB2D3CBA5D72CA6709BF1D94121BF3748801B40F6F5C")
	})
	fmt.Println(err)
	s, _ := store.Load(context.Background())
	for _, p := range s.Publishers() {
		fmt.Println(p.Publisher, p.KeyIDs())
	}
	// Output:
	// <nil>
	// acme [ed25519:34750f98bd59fcfc]
}

// A publisher moves from its old key to a new one; the statement is signed
// by both, and a store that trusted the old key now trusts the new one.
func ExampleStore_ApplyRotation() {
	oldKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x01}, 32))
	newKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x02}, 32))

	// Publisher side: make and publish the statement.
	r, err := trust.NewRotation("acme", oldKey, newKey, time.UnixMilli(1730000000000), "scheduled key rotation")
	if err != nil {
		panic(err)
	}
	doc, _ := r.Marshal()

	// Operator side: a store pinned to the old key.
	s := trust.NewStore()
	s.Decide("acme", oldKey.Public().(ed25519.PublicKey), true)

	stmt, err := trust.ParseRotation(doc)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.ApplyRotation(stmt))
	fmt.Println(s.ApplyRotation(stmt))
	fmt.Println(s.Decide("acme", newKey.Public().(ed25519.PublicKey), false))
	// Output:
	// tofu_pin_moved <nil>
	// already_applied <nil>
	// tofu_pinned <nil>
}
