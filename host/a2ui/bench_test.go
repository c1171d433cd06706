package a2ui_test

import (
	"fmt"
	"testing"

	"github.com/palyra-go/palyra/host/a2ui"
)

// bigDoc is a valid document near MaxDocumentBytes: tables full of cells.
func bigDoc() []byte {
	row := "[" + repeat(16, func(j int) string { return fmt.Sprintf(`"cell %d"`, j) }) + "]"
	table := func(i int) string {
		return comp(fmt.Sprint("t", i), "table", `{"columns":[`+repeat(16, func(int) string { return `"c"` })+`],"rows":[`+repeat(100, func(int) string { return row })+`]}`)
	}
	return []byte(doc(repeat(2, table)))
}

func BenchmarkValidate(b *testing.B) {
	data := bigDoc()
	if _, err := a2ui.Validate(data); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a2ui.Validate(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIsDocument(b *testing.B) {
	data := []byte(`{"components":` + string(bigDoc()) + `,"v":1,"surface":"s"}`)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if !a2ui.IsDocument(data) {
			b.Fatal("not a document")
		}
	}
}
