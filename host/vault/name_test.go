package vault_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/vault"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		in        string
		scope     string
		key       string
		wrongPart string // "" when valid
	}{
		{in: "global/api_token", scope: "global", key: "api_token"},
		{in: "skill:acme.echo_http/api_token", scope: "skill:acme.echo_http", key: "api_token"},
		{in: "principal:admin:ops/api_token", scope: "principal:admin:ops", key: "api_token"},
		{in: "channel:discord:acct_1/bot_token", scope: "channel:discord:acct_1", key: "bot_token"},
		{in: "signing/acme_release", scope: "signing", key: "acme_release"},
		{in: "global/a:b.c-d_e", scope: "global", key: "a:b.c-d_e"},
		{in: "global/" + strings.Repeat("k", vault.MaxKeyBytes), scope: "global", key: strings.Repeat("k", vault.MaxKeyBytes)},
		{in: "", wrongPart: "name"},
		{in: "global", wrongPart: "name"},
		{in: "/api_token", wrongPart: "scope"},
		{in: "global/", wrongPart: "key"},
		{in: "skill:/k", wrongPart: "scope"},
		{in: "signing:acme/k", wrongPart: "scope"},
		{in: "Signing/k", wrongPart: "scope"},
		{in: "Global/k", wrongPart: "scope"},
		{in: " global/k", wrongPart: "scope"},
		{in: "skill:Acme/k", wrongPart: "scope"},
		{in: "user:x/k", wrongPart: "scope"},
		{in: "skill:" + strings.Repeat("a", vault.MaxScopeBytes) + "/k", wrongPart: "scope"},
		{in: "global/API", wrongPart: "key"},
		{in: "global/a/b", wrongPart: "key"},
		{in: "global/k*", wrongPart: "key"},
		{in: "global/k ", wrongPart: "key"},
		{in: "global/" + strings.Repeat("k", vault.MaxKeyBytes+1), wrongPart: "key"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, err := vault.ParseName(tt.in)
			if tt.wrongPart == "" {
				if err != nil {
					t.Fatalf("ParseName(%q) = %v", tt.in, err)
				}
				if n.Scope != tt.scope || n.Key != tt.key || n.String() != tt.in {
					t.Fatalf("ParseName(%q) = %+v (String %q)", tt.in, n, n.String())
				}
				if err := n.Validate(); err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			var ne *vault.NameError
			if !errors.Is(err, vault.ErrInvalidName) || !errors.As(err, &ne) {
				t.Fatalf("ParseName(%q) error = %v, want a *NameError wrapping ErrInvalidName", tt.in, err)
			}
			if ne.Part != tt.wrongPart {
				t.Fatalf("ParseName(%q) blames %q, want %q (%v)", tt.in, ne.Part, tt.wrongPart, err)
			}
			if !strings.Contains(err.Error(), tt.wrongPart) {
				t.Fatalf("error %q does not name the part %q", err, tt.wrongPart)
			}
		})
	}
}

func TestMustParseNamePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("MustParseName accepted an invalid name")
		}
	}()
	vault.MustParseName("nope")
}
