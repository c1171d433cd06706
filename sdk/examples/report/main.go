// Command report is a Palyra-Go skill whose tool returns an A2UI document: a
// title, a table of the rows, a chart of their values, a total line and an
// "Add a row" form. A submit of that form comes back to the same tool as
// {"a2ui_submit": {...}}; the tool answers it with an A2UI update, a patch
// that adds the row to the table and the chart and sets the chart's kind,
// which the host applies to the document the form was on. Build it (from
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

// ReportIn is the input of palyra.report: a report to render, or a submit
// of the document's form.
type ReportIn struct {
	Title  string  `json:"title"`
	Rows   []Row   `json:"rows"`
	Submit *Submit `json:"a2ui_submit"`
}

// Submit is a form submit the host validated against the form.
type Submit struct {
	ComponentID string  `json:"component_id"`
	Values      AddForm `json:"values"`
}

// AddForm are the values of the "add" form.
type AddForm struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
	Kind  string  `json:"kind"`
}

// The document's components, in order: the update addresses them by index.
const (
	iTable   = "1"
	iChart   = "2"
	iTotal   = "3"
	surface  = "report"
	addForm  = "add"
	maxValue = 1_000_000
)

func init() {
	skill.Handle("palyra.report", report)
}

func report(_ *skill.Context, in ReportIn) (any, error) {
	if in.Submit != nil {
		return addRow(in.Submit)
	}
	rows := make([][]any, 0, len(in.Rows))
	points := make([]a2ui.Point, 0, len(in.Rows))
	total := 0.0
	for _, r := range in.Rows {
		rows = append(rows, []any{r.Label, r.Value})
		points = append(points, a2ui.Point{Label: r.Label, Value: r.Value})
		total += r.Value
	}
	label := a2ui.TextField("label", "Label")
	label.Required = true
	value := a2ui.NumberField("value", "Value", 0, maxValue, 0.5)
	value.Required = true
	kind := a2ui.SelectField("kind", "Chart kind",
		a2ui.Option{Label: "Bar", Value: "bar"}, a2ui.Option{Label: "Line", Value: "line"}, a2ui.Option{Label: "Pie", Value: "pie"})
	kind.Default = "bar"
	doc, err := a2ui.New(surface,
		a2ui.Text("title", in.Title),
		a2ui.Table("table", []string{"Label", "Value"}, rows),
		a2ui.BarChart("chart", in.Title, points...),
		a2ui.TextWithTone("total", "Total: "+strconv.FormatFloat(total, 'f', -1, 64), a2ui.ToneMuted),
		a2ui.Form(addForm, "Add a row", "Add", label, value, kind),
	)
	if err != nil {
		// The input schema keeps rows within the A2UI limits; this is for
		// callers that skip it.
		return nil, skill.Errorf("invalid_report", "%v", err)
	}
	return doc, nil
}

// addRow answers a submit of the "add" form with the patch that appends the
// row to the table and the chart, sets the chart's kind and says what was
// added where the total was (the tool keeps no state, so it cannot sum).
func addRow(s *Submit) (*a2ui.Update, error) {
	if s.ComponentID != addForm {
		return nil, skill.Errorf("unknown_form", "no form %q in this report", s.ComponentID)
	}
	v := s.Values
	u, err := a2ui.NewUpdate(surface,
		a2ui.Add(a2ui.Pointer("components", iTable, "props", "rows", "-"), []any{v.Label, v.Value}),
		a2ui.Add(a2ui.Pointer("components", iChart, "props", "series", "-"), a2ui.Point{Label: v.Label, Value: v.Value}),
		a2ui.Replace(a2ui.Pointer("components", iChart, "props", "kind"), v.Kind),
		a2ui.Replace(a2ui.Pointer("components", iTotal, "props", "value"), "Added "+v.Label+": "+strconv.FormatFloat(v.Value, 'f', -1, 64)),
	)
	if err != nil {
		return nil, skill.Errorf("invalid_update", "%v", err)
	}
	return u, nil
}

func main() {}
