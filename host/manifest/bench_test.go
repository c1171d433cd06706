package manifest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
)

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(vectorsDir, "palyra-echo-http-example", "skill.toml"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := manifest.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(vectorsDir, "palyra-echo-http-example", "skill.toml"))
	if err != nil {
		b.Fatal(err)
	}
	m, err := manifest.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := manifest.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}
