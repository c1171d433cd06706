package artifact

import (
	"bytes"
	stdflate "compress/flate"
	"io"
	"testing"
)

// inflate reads at most limit bytes of r's output.
func inflate(r io.ReadCloser, limit int64) ([]byte, error) {
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, limit))
}

// FuzzInflaters checks that the inflater Read uses (klauspost/compress,
// from Read's pool: each one reused after the streams before it, failed or
// cut short by the limit) and the standard library's agree on every
// stream: the same bytes out, and an error for the same streams. An artifact's entries are untrusted
// Deflate streams, so a stream one of them accepts and the other refuses,
// or decodes otherwise, would make an artifact's meaning depend on the
// decoder.
func FuzzInflaters(f *testing.F) {
	for _, level := range []int{stdflate.NoCompression, stdflate.BestSpeed, stdflate.BestCompression, stdflate.HuffmanOnly} {
		var b bytes.Buffer
		w, _ := stdflate.NewWriter(&b, level)
		w.Write(bytes.Repeat([]byte(`{"skill":"acme.echo","tools":[1,2,3]}`), 40))
		w.Close()
		f.Add(b.Bytes())
		f.Add(b.Bytes()[:b.Len()/2])
	}
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff})
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		ours, errOurs := inflate(newInflater(bytes.NewReader(data)), limit)
		std, errStd := inflate(stdflate.NewReader(bytes.NewReader(data)), limit)
		if (errOurs == nil) != (errStd == nil) {
			t.Fatalf("klauspost error %v, compress/flate error %v", errOurs, errStd)
		}
		if errOurs == nil && !bytes.Equal(ours, std) {
			t.Fatalf("outputs differ: %d bytes and %d bytes", len(ours), len(std))
		}
	})
}
