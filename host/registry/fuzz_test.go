package registry

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// FuzzParseIndex: Parse never panics, and whatever it accepts
// re-serializes to the same payload: the payload of a document whose index
// is replaced by its own payload parses to the same payload again (the
// canonical form is a fixed point, so a signature over it is stable).
func FuzzParseIndex(f *testing.F) {
	vector, err := os.ReadFile("testdata/vector-index.json")
	if err != nil {
		f.Fatal(err)
	}
	good := signedDoc(f, sampleIndex())
	f.Add(vector)
	f.Add(good)
	f.Add(compactDoc(f, sampleIndex()))
	f.Add(edit(f, good, func(m map[string]any) { entry0(m)["version"] = "1.0" }))
	f.Add(edit(f, good, func(m map[string]any) { sub(m, "index")["extra"] = true }))
	f.Add(edit(f, good, func(m map[string]any) { entry0(m)["artifact_bytes"] = nil }))
	f.Add([]byte(`{"schema_version":1,"index":{"schema_version":1,"generated_at_unix_ms":0,"entries":[]},"signature":{}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse(data)
		if err != nil {
			return
		}
		p1 := Payload(&doc.Index)
		sig, err := json.Marshal(doc.Signature)
		if err != nil {
			t.Fatal(err)
		}
		again := []byte(`{"schema_version":1,"index":` + string(p1) + `,"signature":` + string(sig) + `}`)
		doc2, err := Parse(again)
		if err != nil {
			t.Fatalf("the payload of an accepted index does not parse: %v\n%s", err, again)
		}
		if p2 := Payload(&doc2.Index); !bytes.Equal(p1, p2) {
			t.Fatalf("payload not stable:\n%s\n%s", p1, p2)
		}
		if PayloadSHA256(&doc.Index) != PayloadSHA256(&doc2.Index) {
			t.Fatal("payload hash not stable")
		}
	})
}
