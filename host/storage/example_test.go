package storage_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/palyra-go/palyra/host/storage"
)

// The broker maps a storage handle to its grant's prefix, joins the
// guest's key to it and calls the store with the skill id; the quota
// comes from the operator's policy.
func Example() {
	ctx := context.Background()
	state, err := os.MkdirTemp("", "palyra-state-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(state)

	s, err := storage.Open(ctx, filepath.Join(state, "storage", "storage.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	quota := storage.Quota{MaxKeys: 2, MaxBytes: 1 << 10}
	for _, guestKey := range []string{"visits", "users/ada"} {
		full, err := storage.JoinKey("counters", guestKey)
		if err != nil {
			log.Fatal(err)
		}
		if err := s.Put(ctx, "acme.x", full, []byte("1"), quota); err != nil {
			log.Fatal(err)
		}
	}

	v, found, err := s.Get(ctx, "acme.x", "counters/visits")
	fmt.Println(string(v), found, err)

	keys, next, err := s.List(ctx, "acme.x", "counters/", storage.DefaultListLimit, "")
	fmt.Println(keys, next == "", err)

	u, _ := s.Usage(ctx, "acme.x")
	fmt.Printf("%d keys, %d bytes\n", u.Keys, u.Bytes)

	err = s.Put(ctx, "acme.x", "counters/third", []byte("1"), quota)
	var qe *storage.QuotaError
	fmt.Println(errors.As(err, &qe), qe.Limit, err)

	_, err = storage.JoinKey("counters", "../other.skill/secret")
	fmt.Println(errors.Is(err, storage.ErrInvalidKey), err)
	// Output:
	// 1 true <nil>
	// [counters/users/ada counters/visits] true <nil>
	// 2 keys, 35 bytes
	// true keys storage quota of skill acme.x exceeded: 3 keys would pass the limit of 2
	// true storage: invalid key "../other.skill/secret": segment ".." is not allowed
}
