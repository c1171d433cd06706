package artifact

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host/manifest"
)

// withGoInfo embeds modinfo between the linker's sentinels inside some
// other bytes, as a Go-built wasm module carries it.
func withGoInfo(modinfo string) []byte {
	b := append([]byte("\x00asm\x01\x00\x00\x00junk"), goInfoStart...)
	b = append(b, modinfo...)
	b = append(b, goInfoEnd...)
	return append(b, "more junk"...)
}

// TestGoBuildInfo: the module information between the sentinels is read;
// a module without it, or with a broken one, has none.
func TestGoBuildInfo(t *testing.T) {
	t.Parallel()
	const modinfo = "path\texample.com/acme/wordcount\n" +
		"mod\texample.com/acme/wordcount\t(devel)\t\n" +
		"dep\tgithub.com/palyra-go/palyra\tv0.0.0-00010101000000-000000000000\t\n" +
		"=>\t../palyra\t\t\n" +
		"dep\tgolang.org/x/text\tv0.3.0\th1:g61tztE5qeGQ89tm6NTjjM9VPIm088od1l6aSorWRWg=\n" +
		"dep\texample.com/old\tv1.0.0\th1:aaa=\n" +
		"=>\texample.com/new\tv1.2.0\th1:bbb=\n" +
		"build\t-ldflags=\"-X main.token=secret\"\n" +
		"build\tGOOS=wasip1\n"
	bi := goBuildInfo(withGoInfo(modinfo))
	if bi == nil || bi.Path != "example.com/acme/wordcount" || len(bi.Deps) != 3 {
		t.Fatalf("goBuildInfo = %+v", bi)
	}
	for name, data := range map[string][]byte{
		"no sentinel":     []byte("\x00asm\x01\x00\x00\x00"),
		"no end sentinel": withGoInfo(modinfo)[:40],
		"not modinfo":     withGoInfo("bogus line\n"),
	} {
		if bi := goBuildInfo(data); bi != nil {
			t.Errorf("%s: goBuildInfo = %+v, want nil", name, bi)
		}
	}

	// In the SBOM: the main module without version, the local replacement
	// without its directory or version, the version replacement as the
	// module used, only the chosen build settings.
	m := &manifest.Manifest{SkillID: "acme.wordcount", Version: "1.0.0", Publisher: "acme", Name: "Word count"}
	files := describe(map[string][]byte{"modules/wordcount.wasm": withGoInfo(modinfo)})
	raw, err := generateSBOM(m, files, &Generate{BuilderVersion: "v1", Now: time.Now}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var bom cdxBOM
	if err := json.Unmarshal(raw, &bom); err != nil {
		t.Fatal(err)
	}
	type lib struct{ purl, props string }
	var libs []lib
	var moduleProps []string
	for _, c := range bom.Components {
		var ps []string
		for _, p := range c.Properties {
			ps = append(ps, p.Name+"="+p.Value)
		}
		if c.Type == "library" {
			if c.BOMRef != c.PURL {
				t.Errorf("%s: bom-ref %s", c.PURL, c.BOMRef)
			}
			libs = append(libs, lib{c.PURL, fmtList(ps)})
		} else {
			moduleProps = ps
		}
	}
	want := []lib{
		{"pkg:golang/example.com/acme/wordcount", ""},
		{"pkg:golang/github.com/palyra-go/palyra", "go:replaced_by=local directory"},
		{"pkg:golang/golang.org/x/text@v0.3.0", "go:sum=h1:g61tztE5qeGQ89tm6NTjjM9VPIm088od1l6aSorWRWg="},
		{"pkg:golang/example.com/new@v1.2.0", "go:replaces=example.com/old@v1.0.0,go:sum=h1:bbb="},
	}
	if !slices.Equal(libs, want) {
		t.Errorf("libraries\n got %v\nwant %v", libs, want)
	}
	wantProps := []string{"palyra:entry_kind=module", "go:package=example.com/acme/wordcount", "go:build:GOOS=wasip1"}
	if !slices.Equal(moduleProps, wantProps) {
		t.Errorf("module properties %v, want %v (no -ldflags)", moduleProps, wantProps)
	}
	if len(bom.Dependencies) != 2 || len(bom.Dependencies[1].DependsOn) != 4 {
		t.Errorf("dependencies = %+v", bom.Dependencies)
	}
}

func fmtList(s []string) string { return strings.Join(s, ",") }

// FuzzGoBuildInfo: whatever a module holds, reading its Go build
// information never panics, and a generated SBOM of it is CycloneDX JSON.
func FuzzGoBuildInfo(f *testing.F) {
	f.Add("path\tx\nmod\tx\t(devel)\t\ndep\ty\tv1.0.0\th1:a=\n=>\tz\tv2.0.0\th1:b=\nbuild\tGOOS=wasip1\n")
	f.Add("path\tx\nmod\tx\t(devel)\t\ndep\ty\tv0.0.0\t\n=>\t../y\t\t\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, modinfo string) {
		data := withGoInfo(modinfo)
		if bi := goBuildInfo(data); bi != nil && bi.Main.Path == "" {
			t.Fatalf("build information without a main module: %+v", bi)
		}
		m := &manifest.Manifest{SkillID: "acme.x", Version: "1.0.0", Publisher: "acme", Name: "X"}
		raw, err := generateSBOM(m, describe(map[string][]byte{"modules/x.wasm": data}), &Generate{BuilderVersion: "v1", Now: time.Now}, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if err := validateSBOM(raw); err != nil {
			t.Fatalf("generated SBOM refused: %v", err)
		}
	})
}
