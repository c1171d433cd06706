package vault_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/palyra-go/palyra/host/vault"
)

// An operator stores a skill's API token; the broker later reads it by the
// name the skill's manifest grants.
func Example() {
	state, err := os.MkdirTemp("", "palyra-state-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(state)

	// With no key source configured, the first Set creates
	// <state>/secrets/vault.key.
	v, err := vault.Open(vault.Config{StateDir: state})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	name, err := vault.ParseName("skill:acme.echo_http/api_token")
	if err != nil {
		panic(err)
	}
	if err := v.Set(ctx, name, []byte("token-value")); err != nil {
		panic(err)
	}

	value, err := v.Get(ctx, name)
	if err != nil {
		panic(err)
	}
	fmt.Println("broker got the value:", bytes.Equal(value, []byte("token-value")))
	clear(value) // the caller owns the slice

	entries, err := v.List(ctx)
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		fmt.Println("stored:", e.Name)
	}

	_, err = v.Get(ctx, vault.MustParseName("global/missing"))
	fmt.Println("missing:", errors.Is(err, vault.ErrNotFound))
	// Output:
	// broker got the value: true
	// stored: skill:acme.echo_http/api_token
	// missing: true
}

// A key given as base64 of 32 bytes (what palyra reads from
// $PALYRA_VAULT_KEY): no key file is written.
func ExampleOpen_encodedKey() {
	state, err := os.MkdirTemp("", "palyra-state-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(state)
	v, err := vault.Open(vault.Config{StateDir: state, EncodedKey: "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="})
	if err != nil {
		panic(err)
	}
	if err := v.Set(context.Background(), vault.MustParseName("global/shared_token"), []byte("v")); err != nil {
		panic(err)
	}
	_, err = os.Stat(v.KeyPath())
	fmt.Println("key file written:", err == nil)
	// Output:
	// key file written: false
}
