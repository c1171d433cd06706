// Command tamper rewrites a .palyra-skill artifact with one byte of one entry
// changed and every other entry, signature.json included, kept as it was.
// The quickstart uses it to show that verification catches the change
// (payload_hash_mismatch). It is a demonstration tool, not part of the product.
//
//	go run ./internal/tools/tamper --artifact in.palyra-skill --entry modules/echo.wasm --output out.palyra-skill
package main

import (
	"archive/zip"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	in := flag.String("artifact", "", "artifact to read")
	entry := flag.String("entry", "", "entry whose middle byte is flipped")
	out := flag.String("output", "", "artifact to write")
	flag.Parse()
	if err := tamper(*in, *entry, *out); err != nil {
		fmt.Fprintln(os.Stderr, "tamper:", err)
		os.Exit(1)
	}
}

func tamper(in, entry, out string) error {
	if in == "" || entry == "" || out == "" {
		return fmt.Errorf("--artifact, --entry and --output are required")
	}
	zr, err := zip.OpenReader(in)
	if err != nil {
		return err
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	found := false
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(rc, 64<<20))
		rc.Close()
		if err != nil {
			return err
		}
		if f.Name == entry && len(data) > 0 {
			data[len(data)/2] ^= 0x01
			found = true
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("no non-empty entry %q in %s", entry, in)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}
