package a2ui_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/palyra-go/palyra/sdk/go/a2ui"
)

func ExampleNew() {
	doc, err := a2ui.New("sales",
		a2ui.Text("title", "Q3 sales"),
		a2ui.Table("table", []string{"Region", "Sales"}, [][]any{{"EU", 120}, {"US", 180}}),
		a2ui.BarChart("chart", "Sales by region", a2ui.Point{Label: "EU", Value: 120}, a2ui.Point{Label: "US", Value: 180}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(doc)
	fmt.Println(string(b))
	// Output:
	// {"v":1,"surface":"sales","components":[{"id":"title","type":"text","props":{"value":"Q3 sales"}},{"id":"table","type":"table","props":{"columns":["Region","Sales"],"rows":[["EU",120],["US",180]]}},{"id":"chart","type":"chart","props":{"title":"Sales by region","kind":"bar","series":[{"label":"EU","value":120},{"label":"US","value":180}]}}]}
}

func ExampleLimitError() {
	series := make([]a2ui.Point, 65)
	for i := range series {
		series[i] = a2ui.Point{Label: fmt.Sprint(i), Value: 1}
	}
	_, err := a2ui.New("s", a2ui.BarChart("chart", "Too many", series...))
	var le *a2ui.LimitError
	fmt.Println(errors.As(err, &le), le.Limit, le.Size, le.Max)
	fmt.Println(err)
	// Output:
	// true chart points 65 64
	// a2ui: components[0] (chart "chart"): chart points is 65, over the limit of 64
}

func ExampleNewPatch() {
	p, err := a2ui.NewPatch(
		a2ui.Replace(a2ui.Pointer("components", "0", "props", "value"), "Q4 sales"),
		a2ui.Add(a2ui.Pointer("components", "-"), a2ui.Markdown("note", "*preliminary*")),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(p)
	fmt.Println(string(b))
	// Output:
	// {"v":1,"ops":[{"op":"replace","path":"/components/0/props/value","value":"Q4 sales"},{"op":"add","path":"/components/-","value":{"id":"note","type":"markdown","props":{"value":"*preliminary*"}}}]}
}
