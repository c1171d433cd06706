//go:build wasip1

// Command report is a Palyra-Go skill whose tool returns an A2UI document: a
// title, a table of the rows and a bar chart of their values. Build it (from
// the repository root) with:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o report.wasm ./sdk/examples/report
package main

import (
	"strconv"

	"github.com/palyra-go/palyra/sdk/go/a2ui"
	"github.com/palyra-go/palyra/sdk/go/skill"
)

// Row is one labelled value.
type Row struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

// ReportIn is the input of palyra.report.
type ReportIn struct {
	Title string `json:"title"`
	Rows  []Row  `json:"rows"`
}

func init() {
	skill.Handle("palyra.report", report)
}

func report(_ *skill.Context, in ReportIn) (*a2ui.Document, error) {
	rows := make([][]any, 0, len(in.Rows))
	points := make([]a2ui.Point, 0, len(in.Rows))
	total := 0.0
	for _, r := range in.Rows {
		rows = append(rows, []any{r.Label, r.Value})
		points = append(points, a2ui.Point{Label: r.Label, Value: r.Value})
		total += r.Value
	}
	doc, err := a2ui.New("report",
		a2ui.Text("title", in.Title),
		a2ui.Table("table", []string{"Label", "Value"}, rows),
		a2ui.BarChart("chart", in.Title, points...),
		a2ui.TextWithTone("total", "Total: "+strconv.FormatFloat(total, 'f', -1, 64), a2ui.ToneMuted),
	)
	if err != nil {
		// The input schema keeps rows within the A2UI limits; this is for
		// callers that skip it.
		return nil, skill.Errorf("invalid_report", "%v", err)
	}
	return doc, nil
}

func main() {}
