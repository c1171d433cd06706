package artifact

import (
	"bytes"
	"compress/flate"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
)

func deflated(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestInflaterReuse checks the pooled inflaters Read registers with
// archive/zip: one that failed on a corrupt stream inflates the next
// stream right, and a second Close does not return an inflater to the
// pool twice (two entries would then share it).
func TestInflaterReuse(t *testing.T) {
	good := mixedModule(64 << 10)
	stream := deflated(t, good)
	corrupt := bytes.Clone(stream)
	for i := len(corrupt) / 4; i < len(corrupt)/2; i++ {
		corrupt[i] ^= 0x5a
	}
	read := func(data []byte) ([]byte, error) {
		f := newInflater(bytes.NewReader(data))
		defer f.Close()
		return io.ReadAll(f)
	}
	for i := range 3 {
		if _, err := read(corrupt); err == nil {
			t.Fatalf("round %d: the corrupt stream inflated without an error", i)
		}
		got, err := read(stream)
		if err != nil || !bytes.Equal(got, good) {
			t.Fatalf("round %d: after a corrupt stream: %d bytes, %v; want the %d bytes back", i, len(got), err, len(good))
		}
	}

	f := newInflater(bytes.NewReader(stream))
	if _, err := io.ReadAll(f); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := f.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if n, err := f.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("Read after Close: %d, %v; want an error", n, err)
	}
	g1, g2 := newInflater(bytes.NewReader(stream)).(*inflater), newInflater(bytes.NewReader(stream)).(*inflater)
	defer g1.Close()
	defer g2.Close()
	if g1.rc == g2.rc {
		t.Fatal("two open inflaters share one reader: a double Close returned it to the pool twice")
	}
}

// TestVerifyConcurrent verifies one artifact from 8 goroutines at once:
// the pooled inflaters never mix two entries' bytes (run with -race).
func TestVerifyConcurrent(t *testing.T) {
	built := builtWithModule(t, 256<<10)
	store := newTestStore()
	// The first Verify pins the key (the test store is not safe for
	// concurrent writes); the others only read it.
	if _, err := Verify(context.Background(), built.Bytes, VerifyOptions{Trust: store, AllowTOFU: true}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				rep, err := Verify(context.Background(), built.Bytes, VerifyOptions{Trust: store, AllowTOFU: true})
				if err == nil && rep.PayloadSHA256 != built.PayloadSHA256 {
					err = fmt.Errorf("verified payload %s, built %s", rep.PayloadSHA256, built.PayloadSHA256)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
