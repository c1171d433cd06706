package trust_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/trust"
)

const emptyStoreJSON = "{\n  \"trusted_publishers\": {},\n  \"tofu_publishers\": {}\n}\n"

func TestParse(t *testing.T) {
	k1 := echoKeyHex
	k2 := hookKeyHex
	tests := []struct {
		name    string
		in      string
		want    string // Marshal output; "" when an error is expected
		wantErr []string
	}{
		{name: "empty file", in: "", want: emptyStoreJSON},
		{name: "whitespace only", in: " \n\t\r\n ", want: emptyStoreJSON},
		{name: "empty object", in: "{}", want: emptyStoreJSON},
		{name: "empty sections", in: `{"trusted_publishers":{},"tofu_publishers":{}}`, want: emptyStoreJSON},
		{
			name: "upper-case key is lower-cased",
			in:   `{"trusted_publishers":{"acme":["` + strings.ToUpper(k1) + `"]}}`,
			want: "{\n  \"trusted_publishers\": {\n    \"acme\": [\n      \"" + k1 + "\"\n    ]\n  },\n  \"tofu_publishers\": {}\n}\n",
		},
		{
			name: "keys trimmed sorted and de-duplicated",
			in:   `{"trusted_publishers":{"acme":["` + k2 + `"," ` + k1 + ` ","` + k2 + `"]}}`,
			want: "{\n  \"trusted_publishers\": {\n    \"acme\": [\n      \"" + k1 + "\",\n      \"" + k2 + "\"\n    ]\n  },\n  \"tofu_publishers\": {}\n}\n",
		},
		{
			name: "publisher trimmed, publishers sorted",
			in:   `{"tofu_publishers":{" zeta ":"` + k2 + `","a.b_c:d-9":"` + strings.ToUpper(k1) + `"}}`,
			want: "{\n  \"trusted_publishers\": {},\n  \"tofu_publishers\": {\n    \"a.b_c:d-9\": \"" + k1 + "\",\n    \"zeta\": \"" + k2 + "\"\n  }\n}\n",
		},
		{name: "upper-case publisher", in: `{"trusted_publishers":{"Acme":["` + k1 + `"]}}`, wantErr: []string{`invalid trust-store publisher "Acme"`}},
		{name: "upper-case tofu publisher", in: `{"tofu_publishers":{"Acme":"` + k1 + `"}}`, wantErr: []string{`invalid trust-store publisher "Acme"`}},
		{name: "empty publisher", in: `{"tofu_publishers":{" ":"` + k1 + `"}}`, wantErr: []string{"invalid trust-store publisher", "empty"}},
		{name: "publisher with space", in: `{"tofu_publishers":{"ac me":"` + k1 + `"}}`, wantErr: []string{`invalid trust-store publisher "ac me"`}},
		{name: "publisher with slash", in: `{"tofu_publishers":{"acme/x":"` + k1 + `"}}`, wantErr: []string{`"acme/x"`}},
		{name: "key not hex", in: `{"trusted_publishers":{"acme":["not-hex"]}}`, wantErr: []string{`invalid trusted key for publisher "acme"`, `"not-hex"`}},
		{name: "key 31 bytes", in: `{"trusted_publishers":{"acme":["` + k1[:62] + `"]}}`, wantErr: []string{"invalid trusted key", "31 bytes"}},
		{name: "key 33 bytes", in: `{"trusted_publishers":{"acme":["` + k1 + `00"]}}`, wantErr: []string{"invalid trusted key", "33 bytes"}},
		{name: "tofu key not hex", in: `{"tofu_publishers":{"acme":"zz"}}`, wantErr: []string{`invalid tofu key for publisher "acme"`, `"zz"`}},
		{name: "allowlisted without keys", in: `{"trusted_publishers":{"acme":[]}}`, wantErr: []string{`"acme" has no keys`}},
		{name: "unknown top-level key", in: `{"trusted_publishers":{},"revoked":{}}`, wantErr: []string{`unknown key "revoked"`}},
		{name: "null section", in: `{"trusted_publishers":null}`, wantErr: []string{"must be an object, not null"}},
		{name: "null key list", in: `{"trusted_publishers":{"acme":null}}`, wantErr: []string{"must be an array, not null"}},
		{name: "key list is a string", in: `{"trusted_publishers":{"acme":"` + k1 + `"}}`, wantErr: []string{"must be an array"}},
		{name: "key is a number", in: `{"trusted_publishers":{"acme":[1]}}`, wantErr: []string{"must be a string, not a number"}},
		{name: "nested object in key list", in: `{"trusted_publishers":{"acme":[{"k":"v"}]}}`, wantErr: []string{"must be a string, not an object"}},
		{name: "tofu value is an array", in: `{"tofu_publishers":{"acme":["` + k1 + `"]}}`, wantErr: []string{"must be a string, not an array"}},
		{name: "duplicate top-level key", in: `{"tofu_publishers":{},"tofu_publishers":{}}`, wantErr: []string{`duplicate key "tofu_publishers"`}},
		{name: "duplicate publisher", in: `{"tofu_publishers":{"acme":"` + k1 + `","acme":"` + k2 + `"}}`, wantErr: []string{`duplicate key "acme"`}},
		{name: "publishers equal after trim", in: `{"trusted_publishers":{"acme":["` + k1 + `"]," acme":["` + k2 + `"]}}`, wantErr: []string{`duplicate trust-store publisher "acme"`}},
		{name: "top-level array", in: `[]`, wantErr: []string{"trust store must be an object, not an array"}},
		{name: "top-level null", in: `null`, wantErr: []string{"must be an object, not null"}},
		{name: "trailing data", in: `{} {}`, wantErr: []string{"data after the JSON document"}},
		{name: "trailing garbage", in: `{}x`, wantErr: []string{"data after"}},
		{name: "truncated", in: `{"trusted_publishers":{`, wantErr: []string{"unexpected end"}},
		{name: "syntax error", in: `{"trusted_publishers" {}}`, wantErr: []string{"invalid JSON"}},
		{name: "too large", in: strings.Repeat(" ", trust.MaxStoreSize+1), wantErr: []string{fmt.Sprint(trust.MaxStoreSize + 1), fmt.Sprint(trust.MaxStoreSize)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := trust.Parse([]byte(tt.in))
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Parse() succeeded, want an error containing %q", tt.wantErr)
				}
				if !errors.Is(err, trust.ErrInvalidStore) || errcode.Of(err) != "invalid_trust_store" {
					t.Errorf("Parse() error %v (code %s), want ErrInvalidStore", err, errcode.Of(err))
				}
				if !strings.HasPrefix(err.Error(), trust.ErrInvalidStore.Error()+": ") {
					t.Errorf("error %q does not start with what failed", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			got, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestVectorsRoundTrip checks Marshal against the serde_json pretty output of
// the derived vectors, byte for byte (they lack only the trailing newline).
func TestVectorsRoundTrip(t *testing.T) {
	for _, name := range []string{"trust-store.allowlist-echo.json", "trust-store.after-tofu-echo.json"} {
		t.Run(name, func(t *testing.T) {
			data := vector(t, name)
			s, err := trust.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if want := string(data) + "\n"; string(got) != want {
				t.Errorf("Marshal() =\n%q\nwant\n%q", got, want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	echo, hook := pub(0x01), pub(0x07)
	allowlist := `{"trusted_publishers":{"acme":["` + echoKeyHex + `"]}}`
	pinned := `{"tofu_publishers":{"acme":"` + echoKeyHex + `"}}`
	both := `{"trusted_publishers":{"acme":["` + hookKeyHex + `"]},"tofu_publishers":{"acme":"` + echoKeyHex + `"}}`
	tests := []struct {
		name      string
		store     string
		publisher string
		key       ed25519.PublicKey
		allowTOFU bool
		want      trust.Decision
		wantErr   error
		expected  []string // DecisionError.Expected
		pinsAfter bool     // the store pins publisher to key afterwards
	}{
		{name: "allowlisted", store: allowlist, publisher: "acme", key: echo, want: trust.DecisionAllowlisted},
		{name: "allowlisted, tofu allowed", store: allowlist, publisher: "acme", key: echo, allowTOFU: true, want: trust.DecisionAllowlisted},
		{name: "allowlisted, key not listed", store: allowlist, publisher: "acme", key: hook, wantErr: trust.ErrTrustedPublisherKeyMismatch, expected: []string{echoKeyHex}},
		{name: "allowlisted, key not listed, no fallback to tofu", store: allowlist, publisher: "acme", key: hook, allowTOFU: true, wantErr: trust.ErrTrustedPublisherKeyMismatch, expected: []string{echoKeyHex}},
		{name: "allowlist wins over pin", store: both, publisher: "acme", key: echo, allowTOFU: true, wantErr: trust.ErrTrustedPublisherKeyMismatch, expected: []string{hookKeyHex}},
		{name: "pinned", store: pinned, publisher: "acme", key: echo, want: trust.DecisionTOFUPinned},
		{name: "pinned to another key", store: pinned, publisher: "acme", key: hook, allowTOFU: true, wantErr: trust.ErrTOFUKeyMismatch, expected: []string{echoKeyHex}},
		{name: "unknown, tofu allowed", store: "", publisher: "acme", key: echo, allowTOFU: true, want: trust.DecisionTOFUNewlyPinned, pinsAfter: true},
		{name: "unknown, tofu allowed, others known", store: pinned, publisher: "other", key: hook, allowTOFU: true, want: trust.DecisionTOFUNewlyPinned, pinsAfter: true},
		{name: "unknown", store: allowlist, publisher: "other", key: echo, wantErr: trust.ErrUntrustedPublisher},
		{name: "invalid publisher", store: "", publisher: "Acme", key: echo, allowTOFU: true, wantErr: trust.ErrInvalidPublisher},
		{name: "untrimmed publisher", store: allowlist, publisher: " acme", key: echo, wantErr: trust.ErrInvalidPublisher},
		{name: "short key", store: allowlist, publisher: "acme", key: echo[:31], wantErr: trust.ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := trust.Parse([]byte(tt.store))
			if err != nil {
				t.Fatal(err)
			}
			before, _ := s.Marshal()
			got, err := s.Decide(tt.publisher, tt.key, tt.allowTOFU)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Decide() error = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Decide() = %q, want %q", got, tt.want)
			}
			if tt.expected != nil || errors.Is(err, trust.ErrUntrustedPublisher) {
				var de *trust.DecisionError
				if !errors.As(err, &de) {
					t.Fatalf("error %T is not a *DecisionError", err)
				}
				if de.Publisher != tt.publisher || de.ObservedKeyHex != hex.EncodeToString(tt.key) || !reflect.DeepEqual(de.Expected, tt.expected) {
					t.Errorf("DecisionError = %+v", de)
				}
			}
			after, _ := s.Marshal()
			if tt.pinsAfter {
				if k, ok := s.TOFUKey(tt.publisher); !ok || k != hex.EncodeToString(tt.key) {
					t.Errorf("TOFUKey(%q) = %q, %v after pinning", tt.publisher, k, ok)
				}
			} else if string(before) != string(after) {
				t.Errorf("Decide changed the store:\n%s", after)
			}
		})
	}
}

func TestDecideErrorCodes(t *testing.T) {
	echo, hook := pub(0x01), pub(0x07)
	s, _ := trust.Parse([]byte(`{"trusted_publishers":{"acme":["` + echoKeyHex + `"]},"tofu_publishers":{"beta":"` + echoKeyHex + `"}}`))
	tests := []struct {
		publisher string
		key       ed25519.PublicKey
		code      string
		msg       []string
	}{
		{"acme", hook, "trusted_publisher_key_mismatch", []string{`trusted publisher key mismatch: publisher "acme"`, hookKeyHex, "ed25519:fe812c12f3ab4ce6", "ed25519:34750f98bd59fcfc"}},
		{"beta", hook, "tofu_key_mismatch", []string{"tofu key mismatch", "pinned to " + echoKeyHex}},
		{"gamma", echo, "untrusted_publisher", []string{`untrusted publisher: publisher "gamma"`, "trust on first use is off"}},
	}
	for _, tt := range tests {
		_, err := s.Decide(tt.publisher, tt.key, false)
		if got := errcode.Of(err); got != tt.code {
			t.Errorf("%s: code %q, want %q (%v)", tt.publisher, got, tt.code, err)
		}
		for _, m := range tt.msg {
			if err == nil || !strings.Contains(err.Error(), m) {
				t.Errorf("%s: error %v does not contain %q", tt.publisher, err, m)
			}
		}
	}
}

// TestDecideVectors follows the derived vectors' expectations (expected.json).
func TestDecideVectors(t *testing.T) {
	echo, hook := pub(0x01), pub(0x07)
	if hex.EncodeToString(echo) != echoKeyHex || hex.EncodeToString(hook) != hookKeyHex {
		t.Fatal("test keys do not match the vectors")
	}
	allow, err := trust.Parse(vector(t, "trust-store.allowlist-echo.json"))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := allow.Decide("acme", echo, false); err != nil || d != trust.DecisionAllowlisted {
		t.Errorf("allowlist store: Decide = %q, %v, want allowlisted", d, err)
	}
	if _, err := allow.Decide("acme", hook, true); !errors.Is(err, trust.ErrTrustedPublisherKeyMismatch) {
		t.Errorf("allowlist store, other key: %v, want ErrTrustedPublisherKeyMismatch", err)
	}

	s := trust.NewStore()
	if _, err := s.Decide("acme", echo, false); !errors.Is(err, trust.ErrUntrustedPublisher) {
		t.Errorf("empty store without TOFU: %v, want ErrUntrustedPublisher", err)
	}
	if d, err := s.Decide("acme", echo, true); err != nil || d != trust.DecisionTOFUNewlyPinned {
		t.Fatalf("empty store with TOFU: %q, %v", d, err)
	}
	got, _ := s.Marshal()
	if want := string(vector(t, "trust-store.after-tofu-echo.json")) + "\n"; string(got) != want {
		t.Errorf("store after TOFU =\n%s\nwant\n%s", got, want)
	}
	if d, err := s.Decide("acme", echo, false); err != nil || d != trust.DecisionTOFUPinned {
		t.Errorf("second verify: %q, %v, want tofu_pinned", d, err)
	}
	if _, err := s.Decide("acme", hook, true); !errors.Is(err, trust.ErrTOFUKeyMismatch) {
		t.Errorf("hook_skill key for pinned acme: %v, want ErrTOFUKeyMismatch", err)
	}
}

func TestAddTrusted(t *testing.T) {
	s := trust.NewStore()
	for _, k := range []string{hookKeyHex, " " + strings.ToUpper(echoKeyHex) + "\n", echoKeyHex} {
		if err := s.AddTrusted(" acme ", k); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := s.TrustedKeys("acme"), []string{echoKeyHex, hookKeyHex}; !reflect.DeepEqual(got, want) {
		t.Errorf("TrustedKeys = %v, want %v", got, want)
	}
	if d, err := s.Decide("acme", pub(0x07), false); err != nil || d != trust.DecisionAllowlisted {
		t.Errorf("Decide after AddTrusted = %q, %v", d, err)
	}
	tests := []struct {
		publisher, key string
		want           error
		code           string
	}{
		{"Acme", echoKeyHex, trust.ErrInvalidPublisher, "invalid_publisher"},
		{"", echoKeyHex, trust.ErrInvalidPublisher, "invalid_publisher"},
		{"acme", "not-hex", trust.ErrInvalidKey, "invalid_publisher_key"},
		{"acme", echoKeyHex[:10], trust.ErrInvalidKey, "invalid_publisher_key"},
	}
	for _, tt := range tests {
		err := s.AddTrusted(tt.publisher, tt.key)
		if !errors.Is(err, tt.want) || errcode.Of(err) != tt.code {
			t.Errorf("AddTrusted(%q, %q) = %v, want %v", tt.publisher, tt.key, err, tt.want)
		}
	}
}

func TestPublishers(t *testing.T) {
	s, err := trust.Parse([]byte(`{"trusted_publishers":{"zeta":["` + hookKeyHex + `"],"acme":["` + echoKeyHex + `"]},"tofu_publishers":{"beta":"` + echoKeyHex + `","acme":"` + hookKeyHex + `"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []trust.PublisherInfo{
		{Publisher: "acme", TrustedKeys: []string{echoKeyHex}, TOFUKey: hookKeyHex},
		{Publisher: "beta", TOFUKey: echoKeyHex},
		{Publisher: "zeta", TrustedKeys: []string{hookKeyHex}},
	}
	if got := s.Publishers(); !reflect.DeepEqual(got, want) {
		t.Errorf("Publishers() = %+v\nwant %+v", got, want)
	}
	if got := want[0].KeyIDs(); !reflect.DeepEqual(got, []string{"ed25519:34750f98bd59fcfc", "ed25519:fe812c12f3ab4ce6"}) {
		t.Errorf("KeyIDs() = %v", got)
	}
	if got := trust.NewStore().Publishers(); len(got) != 0 {
		t.Errorf("empty store Publishers() = %v", got)
	}
}

func TestCloneIsDeep(t *testing.T) {
	s := trust.NewStore()
	if err := s.AddTrusted("acme", echoKeyHex); err != nil {
		t.Fatal(err)
	}
	c := s.Clone()
	if err := c.AddTrusted("acme", hookKeyHex); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decide("beta", pub(1), true); err != nil {
		t.Fatal(err)
	}
	if got := s.Publishers(); len(got) != 1 || len(got[0].TrustedKeys) != 1 {
		t.Errorf("original changed: %+v", got)
	}
}

func TestStoreDecider(t *testing.T) {
	s := trust.NewStore()
	var d interface {
		Decide(ctx context.Context, publisher string, key ed25519.PublicKey, allowTOFU bool) (string, error)
	} = s.Decider()
	got, err := d.Decide(context.Background(), "acme", pub(1), true)
	if err != nil || got != "tofu_newly_pinned" {
		t.Errorf("Decide = %q, %v", got, err)
	}
	if _, ok := s.TOFUKey("acme"); !ok {
		t.Error("Store.Decider did not pin in the store")
	}
}
