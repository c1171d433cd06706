package trust

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "update golden files (testdata/trust/rotation-example.json, the example in ROTATION.md)")

const (
	goldenRotationPath = "../../testdata/trust/rotation-example.json"
	rotationDocPath    = "ROTATION.md"
	exampleBegin       = "<!-- BEGIN GENERATED EXAMPLE -->\n"
	exampleEnd         = "<!-- END GENERATED EXAMPLE -->\n"
)

// exampleRotation is the worked example of ROTATION.md.
func exampleRotation(t testing.TB) *Rotation {
	t.Helper()
	oldKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x01}, 32))
	newKey := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x02}, 32))
	r, err := NewRotation("acme", oldKey, newKey, time.UnixMilli(1730000000000), "scheduled key rotation")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// exampleSection renders the generated part of ROTATION.md: the preimage
// field by field, the digest and the document.
func exampleSection(t testing.TB, r *Rotation, doc []byte) string {
	t.Helper()
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(r.IssuedAt.UnixMilli()))
	frame := func(b []byte) string {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		return hex.EncodeToString(n[:]) + " " + hex.EncodeToString(b)
	}
	rows := [][2]string{
		{hex.EncodeToString([]byte(RotationContext)), fmt.Sprintf("context %q", RotationContext)},
		{frame([]byte(r.Publisher)), fmt.Sprintf("publisher %q", r.Publisher)},
		{frame(r.OldKey), "old public key"},
		{frame(r.NewKey), "new public key"},
		{frame(ms[:]), fmt.Sprintf("issued_at_unix_ms %d", r.IssuedAt.UnixMilli())},
		{frame([]byte(r.Reason)), fmt.Sprintf("reason %q", r.Reason)},
	}
	var joined strings.Builder
	var b strings.Builder
	b.WriteString("Preimage, one part per line (length prefix, then the bytes, in hex):\n\n```\n")
	for _, row := range rows {
		fmt.Fprintf(&b, "%s\n    # %s\n", row[0], row[1])
		joined.WriteString(strings.ReplaceAll(row[0], " ", ""))
	}
	b.WriteString("```\n\n")
	if joined.String() != hex.EncodeToString(r.preimage()) {
		t.Fatal("rendered preimage does not match preimage()")
	}
	fmt.Fprintf(&b, "Digest (the 64 ASCII characters both keys sign):\n\n```\n%s\n```\n\n", r.Digest())
	fmt.Fprintf(&b, "Old key %s, new key %s. The statement (`testdata/trust/rotation-example.json`):\n\n```json\n%s```\n",
		keyID(r.OldKey), keyID(r.NewKey), doc)
	return b.String()
}

// TestRotationGolden checks that the worked example is reproducible (Ed25519
// is deterministic), that the golden file verifies, and that ROTATION.md
// shows exactly it.
func TestRotationGolden(t *testing.T) {
	r := exampleRotation(t)
	doc, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(rotationDocPath)
	if err != nil {
		t.Fatal(err)
	}
	begin := bytes.Index(md, []byte(exampleBegin))
	end := bytes.Index(md, []byte(exampleEnd))
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the generated-example markers", rotationDocPath)
	}
	section := exampleSection(t, r, doc)
	newMD := string(md[:begin+len(exampleBegin)]) + section + string(md[end:])

	if *update {
		if err := os.WriteFile(goldenRotationPath, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rotationDocPath, []byte(newMD), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(goldenRotationPath)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(golden, doc) {
		t.Errorf("%s differs from the generated example (run with -update):\n%s", goldenRotationPath, doc)
	}
	if string(md) != newMD && !*update {
		t.Errorf("the example in %s is stale (run with -update)", rotationDocPath)
	}

	parsed, err := ParseRotation(golden)
	if err != nil {
		t.Fatal(err)
	}
	if err := parsed.Verify(); err != nil {
		t.Fatalf("golden statement does not verify: %v", err)
	}
	if parsed.Digest() != r.Digest() {
		t.Errorf("digest %s, want %s", parsed.Digest(), r.Digest())
	}
	s := NewStore()
	s.tofu = map[string]string{"acme": hex.EncodeToString(parsed.OldKey)}
	if out, err := s.ApplyRotation(parsed); err != nil || out != RotationTOFUPinMoved {
		t.Errorf("ApplyRotation = %q, %v", out, err)
	}
}
