package a2ui

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf16"
)

// Version is the value of "v" in documents and patches.
const Version = 1

// Limits of the renderer (Palyra's DEFAULT_RENDER_INPUT_LIMITS and the
// per-prop caps of its normalizer). Lengths are in UTF-16 code units.
const (
	MaxSurface       = 128
	MaxComponents    = 128
	MaxComponentID   = 64
	MaxString        = 512 // any string prop without a cap of its own
	MaxMarkdown      = 12000
	MaxListItems     = 256
	MaxTableColumns  = 16
	MaxTableRows     = 256
	MaxFormFields    = 32
	MaxSubmitLabel   = 48
	MaxFieldID       = 48
	MaxFieldLabel    = 64
	MaxFieldHint     = 128
	MaxPlaceholder   = 96
	MaxSelectOptions = 64
	MaxOptionLabel   = 64
	MaxOptionValue   = 64
	MaxChartPoints   = 64
	MaxChartValue    = 1_000_000 // chart values lie in [0, MaxChartValue]
	MaxNumberRange   = 1_000_000 // number fields: min and max lie in ±MaxNumberRange
	MinNumberStep    = 1e-6
	MaxNumberStep    = 1e5
)

var (
	// ErrLimit: a document or patch is over one of the renderer's limits.
	ErrLimit = errors.New("a2ui: over a limit")
	// ErrInvalid: a document or patch breaks a rule other than a size limit.
	ErrInvalid = errors.New("a2ui: invalid")
)

// LimitError is a value over a limit. It wraps ErrLimit.
type LimitError struct {
	// At locates the value, e.g. `components[1] (table "sales")`.
	At string
	// Limit names the limit, e.g. "table rows".
	Limit string
	// Max is the limit; Size is what was seen.
	Max, Size int
}

func (e *LimitError) Error() string {
	at := ""
	if e.At != "" {
		at = e.At + ": "
	}
	return fmt.Sprintf("a2ui: %s%s is %d, over the limit of %d", at, e.Limit, e.Size, e.Max)
}

// Unwrap returns ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

func invalid(at, format string, args ...any) error {
	if at != "" {
		at += ": "
	}
	return fmt.Errorf("%w: %s%s", ErrInvalid, at, fmt.Sprintf(format, args...))
}

// Document is an A2UI document.
type Document struct {
	V          int         `json:"v"`
	Surface    string      `json:"surface"`
	Components []Component `json:"components"`
}

// Component is one rendered element. Build it with a constructor (Text,
// Table, ...), or set Props to one of the *Props types directly.
type Component struct {
	ID    string `json:"id"`
	Type  Type   `json:"type"`
	Props Props  `json:"props"`
}

// Type is a component type.
type Type string

// The component types.
const (
	TypeText     Type = "text"
	TypeMarkdown Type = "markdown"
	TypeList     Type = "list"
	TypeTable    Type = "table"
	TypeForm     Type = "form"
	TypeChart    Type = "chart"
)

// Props are a component's properties: TextProps, MarkdownProps, ListProps,
// TableProps, FormProps or ChartProps.
type Props interface {
	componentType() Type
	check(at string) error
}

// New returns the document for surface with components, after checking it
// as Validate does.
func New(surface string, components ...Component) (*Document, error) {
	d := &Document{V: Version, Surface: surface, Components: components}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}

// Validate checks d against the limits and rules of the renderer: v is 1,
// the surface is non-blank and at most MaxSurface long, there are 1 to
// MaxComponents components with unique ids of [A-Za-z0-9:_-] at most
// MaxComponentID long, each with props of its type within their limits.
func (d *Document) Validate() error {
	if d.V != Version {
		return invalid("", "v is %d, want %d", d.V, Version)
	}
	if strings.TrimSpace(d.Surface) == "" {
		return invalid("", "surface is blank")
	}
	if err := maxLen("", "surface length", d.Surface, MaxSurface); err != nil {
		return err
	}
	if len(d.Components) == 0 {
		return invalid("", "no components")
	}
	if len(d.Components) > MaxComponents {
		return &LimitError{Limit: "components", Max: MaxComponents, Size: len(d.Components)}
	}
	seen := make(map[string]int, len(d.Components))
	for i, c := range d.Components {
		at := fmt.Sprintf("components[%d]", i)
		if err := checkID(at, "component id", c.ID, MaxComponentID); err != nil {
			return err
		}
		if j, dup := seen[c.ID]; dup {
			return invalid(at, "id %q already used by components[%d]", c.ID, j)
		}
		seen[c.ID] = i
		at = fmt.Sprintf("components[%d] (%s %q)", i, c.Type, c.ID)
		if c.Props == nil {
			return invalid(at, "no props")
		}
		if c.Props.componentType() != c.Type {
			return invalid(at, "props are for type %q", c.Props.componentType())
		}
		if err := c.Props.check(at); err != nil {
			return err
		}
	}
	return nil
}

// jsLen is the length of s as JavaScript counts it (UTF-16 code units).
func jsLen(s string) int {
	n := 0
	for _, r := range s { // invalid UTF-8 yields U+FFFD, one unit, as in JS
		n += utf16.RuneLen(r)
	}
	return n
}

func maxLen(at, limit, s string, max int) error {
	if n := jsLen(s); n > max {
		return &LimitError{At: at, Limit: limit, Max: max, Size: n}
	}
	return nil
}

func checkID(at, what, id string, max int) error {
	if id == "" {
		return invalid(at, "%s is empty", what)
	}
	if err := maxLen(at, what+" length", id, max); err != nil {
		return err
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ':' || r == '_' || r == '-') {
			return invalid(at, "%s %q has %q; allowed are [A-Za-z0-9:_-]", what, id, r)
		}
	}
	return nil
}

// checkValue checks a free-form cell or item: strings must fit MaxString.
func checkValue(at, limit string, v any) error {
	if s, ok := v.(string); ok {
		return maxLen(at, limit, s, MaxString)
	}
	if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return invalid(at, "%s is not a finite number", limit)
	}
	return nil
}

// Tone colours a text component.
type Tone string

// The tones; the empty Tone is omitted and renders as normal.
const (
	ToneNormal   Tone = "normal"
	ToneMuted    Tone = "muted"
	ToneSuccess  Tone = "success"
	ToneCritical Tone = "critical"
)

// TextProps are the props of a text component.
type TextProps struct {
	Value string `json:"value"`
	Tone  Tone   `json:"tone,omitempty"`
}

// Text returns a text component.
func Text(id, value string) Component {
	return Component{ID: id, Type: TypeText, Props: TextProps{Value: value}}
}

// TextWithTone returns a text component with a tone.
func TextWithTone(id, value string, tone Tone) Component {
	return Component{ID: id, Type: TypeText, Props: TextProps{Value: value, Tone: tone}}
}

func (TextProps) componentType() Type { return TypeText }

func (p TextProps) check(at string) error {
	switch p.Tone {
	case "", ToneNormal, ToneMuted, ToneSuccess, ToneCritical:
	default:
		return invalid(at, "unknown tone %q", p.Tone)
	}
	return maxLen(at, "text length", p.Value, MaxString)
}

// MarkdownProps are the props of a markdown component. The renderer supports
// headings, lists, inline code, bold, italic and http(s)/mailto/relative
// links; there is no raw HTML.
type MarkdownProps struct {
	Value string `json:"value"`
}

// Markdown returns a markdown component.
func Markdown(id, markdown string) Component {
	return Component{ID: id, Type: TypeMarkdown, Props: MarkdownProps{Value: markdown}}
}

func (MarkdownProps) componentType() Type { return TypeMarkdown }

func (p MarkdownProps) check(at string) error {
	return maxLen(at, "markdown length", p.Value, MaxMarkdown)
}

// ListProps are the props of a list component. Items that are not strings
// are shown JSON-encoded.
type ListProps struct {
	Ordered bool  `json:"ordered"`
	Items   []any `json:"items"`
}

// List returns a list component.
func List(id string, ordered bool, items ...any) Component {
	if items == nil {
		items = []any{}
	}
	return Component{ID: id, Type: TypeList, Props: ListProps{Ordered: ordered, Items: items}}
}

func (ListProps) componentType() Type { return TypeList }

func (p ListProps) check(at string) error {
	if len(p.Items) > MaxListItems {
		return &LimitError{At: at, Limit: "list items", Max: MaxListItems, Size: len(p.Items)}
	}
	for i, it := range p.Items {
		if err := checkValue(at, fmt.Sprintf("list item %d length", i), it); err != nil {
			return err
		}
	}
	return nil
}

// TableProps are the props of a table component. The first column is the
// row header. A row may be shorter than the columns (it is padded), not
// longer.
type TableProps struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// Table returns a table component.
func Table(id string, columns []string, rows [][]any) Component {
	if rows == nil {
		rows = [][]any{}
	}
	return Component{ID: id, Type: TypeTable, Props: TableProps{Columns: columns, Rows: rows}}
}

func (TableProps) componentType() Type { return TypeTable }

func (p TableProps) check(at string) error {
	if len(p.Columns) == 0 {
		return invalid(at, "table has no columns")
	}
	if len(p.Columns) > MaxTableColumns {
		return &LimitError{At: at, Limit: "table columns", Max: MaxTableColumns, Size: len(p.Columns)}
	}
	if len(p.Rows) > MaxTableRows {
		return &LimitError{At: at, Limit: "table rows", Max: MaxTableRows, Size: len(p.Rows)}
	}
	for i, c := range p.Columns {
		if err := maxLen(at, fmt.Sprintf("column %d length", i), c, MaxString); err != nil {
			return err
		}
	}
	for i, row := range p.Rows {
		if len(row) > len(p.Columns) {
			return &LimitError{At: at, Limit: fmt.Sprintf("row %d cells", i), Max: len(p.Columns), Size: len(row)}
		}
		for j, cell := range row {
			if err := checkValue(at, fmt.Sprintf("row %d cell %d length", i, j), cell); err != nil {
				return err
			}
		}
	}
	return nil
}

// ChartKind is the kind of a chart. Palyra's web renderer draws every chart
// as a bar chart; other clients may honour line and pie.
type ChartKind string

// The chart kinds.
const (
	ChartBar  ChartKind = "bar"
	ChartLine ChartKind = "line"
	ChartPie  ChartKind = "pie"
)

// Point is one value of a chart's single series.
type Point struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

// ChartProps are the props of a chart component: one series of labelled
// values in [0, MaxChartValue].
type ChartProps struct {
	Title  string    `json:"title,omitempty"`
	Kind   ChartKind `json:"kind,omitempty"`
	Series []Point   `json:"series"`
}

// Chart returns a chart component of the given kind.
func Chart(id string, kind ChartKind, title string, series ...Point) Component {
	if series == nil {
		series = []Point{}
	}
	return Component{ID: id, Type: TypeChart, Props: ChartProps{Title: title, Kind: kind, Series: series}}
}

// BarChart returns a bar chart.
func BarChart(id, title string, series ...Point) Component {
	return Chart(id, ChartBar, title, series...)
}

// LineChart returns a line chart.
func LineChart(id, title string, series ...Point) Component {
	return Chart(id, ChartLine, title, series...)
}

// PieChart returns a pie chart.
func PieChart(id, title string, series ...Point) Component {
	return Chart(id, ChartPie, title, series...)
}

func (ChartProps) componentType() Type { return TypeChart }

func (p ChartProps) check(at string) error {
	switch p.Kind {
	case "", ChartBar, ChartLine, ChartPie:
	default:
		return invalid(at, "unknown chart kind %q", p.Kind)
	}
	if err := maxLen(at, "chart title length", p.Title, MaxString); err != nil {
		return err
	}
	if len(p.Series) > MaxChartPoints {
		return &LimitError{At: at, Limit: "chart points", Max: MaxChartPoints, Size: len(p.Series)}
	}
	for i, pt := range p.Series {
		if err := maxLen(at, fmt.Sprintf("point %d label length", i), pt.Label, MaxString); err != nil {
			return err
		}
		if math.IsNaN(pt.Value) || math.IsInf(pt.Value, 0) || pt.Value < 0 || pt.Value > MaxChartValue {
			return invalid(at, "point %d (%q) value %v is outside [0, %d]", i, pt.Label, pt.Value, MaxChartValue)
		}
	}
	return nil
}
