// Package a2ui builds A2UI documents: the agent-to-user UI a Palyra tool can
// return for a client to render, {"v":1,"surface":...,"components":[...]},
// and the JSON-Patch updates {"v":1,"ops":[...]} that change one.
//
// Components have typed constructors (Text, Markdown, List, Table, Form with
// its fields, Chart) and New checks the whole document against the renderer's
// limits (Palyra's DEFAULT_RENDER_INPUT_LIMITS and per-prop caps) when it is
// built, instead of leaving the client to clamp or silently drop what is
// over: a failure wraps ErrLimit (a *LimitError naming the limit, the size
// seen and the component) or ErrInvalid.
//
//	doc, err := a2ui.New("sales-report",
//		a2ui.Text("title", "Q3 sales"),
//		a2ui.Table("table", []string{"Region", "Sales"}, [][]any{{"EU", 120}, {"US", 180}}),
//		a2ui.BarChart("chart", "Sales by region", a2ui.Point{Label: "EU", Value: 120}, a2ui.Point{Label: "US", Value: 180}),
//	)
//	if err != nil {
//		return err
//	}
//	out, err := json.Marshal(doc)
//
// Lengths are counted as a JavaScript renderer counts them, in UTF-16 code
// units. The package has no state; its values are plain data.
package a2ui
