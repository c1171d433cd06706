package trust_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/trust"
)

// TestFixtures loads the hand-written stores of testdata/trust (also fuzz
// seeds).
func TestFixtures(t *testing.T) {
	const dir = "../../testdata/trust/"
	s, err := trust.Parse(readFile(t, dir+"store-mixed.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "trusted_publishers": {
    "acme": [
      "` + echoKeyHex + `",
      "` + hookKeyHex + `"
    ]
  },
  "tofu_publishers": {
    "acme": "8139770ea87d175f56a35466c34c7ecccb8d8a91b4ee37a25df60f5b8fc9b394",
    "zeta.tools": "` + echoKeyHex + `"
  }
}
`
	if got, _ := s.Marshal(); string(got) != want {
		t.Errorf("store-mixed.json normalizes to\n%s\nwant\n%s", got, want)
	}
	for name, msg := range map[string]string{
		"store-invalid-publisher.json": `invalid trust-store publisher "Acme"`,
		"store-invalid-key.json":       `invalid trusted key for publisher "acme": "not-hex"`,
	} {
		_, err := trust.Parse(readFile(t, dir+name))
		if !errors.Is(err, trust.ErrInvalidStore) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", name, err, msg)
		}
	}
}
