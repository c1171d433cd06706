package registry

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"os"
	"testing"
	"time"

	"github.com/palyra-go/palyra/internal/testskill"
)

// The vector: testdata/vector-index.json was derived by hand from facts
// §3.7 and computed independently of this package, with Python 3:
//
//	payload = json.dumps(index, separators=(",", ":"), ensure_ascii=False).encode()
//	payload_sha256 = hashlib.sha256(payload).hexdigest()
//	signature = Ed25519PrivateKey.from_private_bytes(b"\x07" + bytes(31)).sign(payload_sha256.encode())
//
// (the cryptography package's Ed25519; the seed is testskill.Key(7)'s).
// Python's compact dumps writes what serde_json does: no HTML escaping of
// < > &, non-ASCII and U+2028 raw, only '"', '\\' and control characters
// escaped. Its entries carry '<', '>', '&' (an artifact URL with a query),
// 'é', U+2028, a quote, a backslash and a tab, an entry with and one
// without artifact_bytes, and a next_page.
const (
	vectorPayload       = "{\"schema_version\":1,\"generated_at_unix_ms\":1760000000000,\"entries\":[{\"skill_id\":\"acme.echo\",\"version\":\"1.0.0\",\"publisher\":\"acme\",\"artifact\":\"https://registry.example/dl?skill=acme.echo&v=1.0.0&tag=<b>\",\"artifact_sha256\":\"abababababababababababababababababababababababababababababababab\",\"artifact_bytes\":4096},{\"skill_id\":\"acme.vector\",\"version\":\"2.10.3\",\"publisher\":\"acme\",\"artifact\":\"skills/vector é\u2028 \\\"q\\\" \\\\ \\t.palyra-skill\",\"artifact_sha256\":\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"}],\"next_page\":\"index-2.json?after=acme.vector&x=<>\"}"
	vectorPayloadSHA256 = "c1d266abe5dbe4a03fdc7e2a461b87c40878d02fd1f388a94cb997b89654ec6d"
	vectorKeyID         = "ed25519:4e40120b721f4d3b"
	vectorPublicKey     = "ovovSjVboukHpTAJ6eN8rd96x+ZqCLoHYx9VMHKz8kw="
	vectorSignature     = "9RtkKgVdTnL6AM+Z5hD21u/Hq1v5wtQIUFVxAfadrJ1nYhOPd78i5WLaHOl5qZaHGMv82hswbrL7owNVsEIwDw=="
)

// TestVector: the hand-derived index parses; our payload is exactly the
// independently computed bytes and hash; our Sign gives exactly its
// signature fields; our Verify accepts it; and the signature verifies by
// Palyra's rule (Ed25519 over the ASCII hex of the payload hash).
func TestVector(t *testing.T) {
	data, err := os.ReadFile("testdata/vector-index.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := Payload(&doc.Index); string(got) != vectorPayload {
		t.Fatalf("payload\n got %s\nwant %s", got, vectorPayload)
	}
	if got := PayloadSHA256(&doc.Index); got != vectorPayloadSHA256 {
		t.Fatalf("payload_sha256 = %s, want %s", got, vectorPayloadSHA256)
	}
	key := testskill.Key(7)
	sig := Sign(&doc.Index, key, "hub", time.UnixMilli(1_760_000_000_000))
	if sig != doc.Signature {
		t.Fatalf("Sign = %+v\nwant %+v", sig, doc.Signature)
	}
	if sig.KeyID != vectorKeyID || sig.PublicKeyBase64 != vectorPublicKey || sig.SignatureBase64 != vectorSignature || sig.PayloadSHA256 != vectorPayloadSHA256 {
		t.Fatalf("signature fields = %+v", sig)
	}
	v, err := Verify(context.Background(), doc, trustingKey(t, "hub", key), false)
	if err != nil || v.TrustDecision != "allowlisted" {
		t.Fatalf("Verify: %v %v", v, err)
	}
	pub, _ := base64.StdEncoding.DecodeString(vectorPublicKey)
	raw, _ := base64.StdEncoding.DecodeString(vectorSignature)
	if !ed25519.Verify(pub, []byte(vectorPayloadSHA256), raw) {
		t.Fatal("the vector's signature does not verify over the ASCII hex")
	}
	// Go's encoding/json would escape U+2028 even without HTML escaping;
	// the payload must not (serde does not).
	if !bytes.Contains(Payload(&doc.Index), []byte("\u2028")) || bytes.Contains(Payload(&doc.Index), []byte(`\u003c`)) {
		t.Fatal("payload escapes what serde does not")
	}
	// Our own pretty rendering of the document reads back to the same
	// document.
	again, err := Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	doc2, err := Parse(again)
	if err != nil || string(Payload(&doc2.Index)) != vectorPayload || doc2.Signature != doc.Signature {
		t.Fatalf("re-parse of Marshal: %v", err)
	}
}
