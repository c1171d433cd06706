package output

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"sigs.k8s.io/yaml"
)

// Format is how a command prints its result.
type Format string

// The formats -o accepts.
const (
	// Text is for people: tables for lists, key=value lines for records.
	Text Format = "text"
	// Wide is Text with every column of a table, not only the ones a
	// person scans.
	Wide Format = "wide"
	// JSON is the result as indented JSON.
	JSON Format = "json"
	// YAML is the result as YAML, converted from its JSON.
	YAML Format = "yaml"
)

// Formats lists the formats -o accepts, for help and completion.
func Formats() []string { return []string{string(Text), string(Wide), string(JSON), string(YAML)} }

// ParseFormat reads an -o value; "" is Text.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "":
		return Text, nil
	case Text, Wide, JSON, YAML:
		return f, nil
	}
	return "", fmt.Errorf("unknown output format %q (want one of %s)", s, strings.Join(Formats(), ", "))
}

// Structured reports whether f prints the result value (json, yaml)
// rather than text for people.
func (f Format) Structured() bool { return f == JSON || f == YAML }

// WriteValue prints v in a structured format: indented JSON (HTML
// characters left as they are) or the YAML of that JSON.
func WriteValue(w io.Writer, f Format, v any) error {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if f == JSON {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	out := buf.String()
	if f == YAML {
		y, err := yaml.JSONToYAML([]byte(out))
		if err != nil {
			return err
		}
		out = string(y)
	}
	_, err := io.WriteString(w, out)
	return err
}

// Quote returns s as it can be read back from text output: unchanged when
// it is a plain word, else Go-quoted ("" for empty, "cli test" for a value
// with a space, and escapes for quotes, backslashes and control
// characters).
func Quote(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if unicode.IsSpace(r) || r == '"' || r == '\'' || r == '\\' || r == '`' || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// QuoteLine is Quote for a value that ends its line ("Label:  value"),
// where inner spaces are unambiguous: it quotes only an empty value, one
// with leading or trailing space, quotes at its ends, or control
// characters (a newline would break the line).
func QuoteLine(s string) string {
	if s == "" || strings.TrimSpace(s) != s || strings.HasPrefix(s, `"`) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			return strconv.Quote(s)
		}
	}
	return s
}

// KV renders key=value pairs on one line, each value quoted when needed.
// pairs alternate keys and values; a value may be a string, a bool, an
// integer or anything fmt prints.
func KV(pairs ...any) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%v=%s", pairs[i], Quote(cell(pairs[i+1])))
	}
	return b.String()
}

// cell is a value's text, unquoted.
func cell(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// Column is one column of a Table.
type Column struct {
	// Header is printed upper-case above the column.
	Header string
	// Wide marks a column shown only with -o wide.
	Wide bool
}

// Table is an aligned table for list commands: a header line and one line
// per row, the columns padded with spaces (text/tabwriter), each cell
// quoted when needed (Quote; the last column shown runs to the end of the
// line, so it is quoted as QuoteLine: a description keeps its spaces
// unquoted). The zero value has no columns; use NewTable.
type Table struct {
	cols []Column
	rows [][]string
}

// NewTable returns a table with these columns.
func NewTable(cols ...Column) *Table { return &Table{cols: cols} }

// Row adds a row; cells are in column order (strings, bools, integers or
// anything fmt prints) and a missing trailing cell is empty.
func (t *Table) Row(cells ...any) {
	row := make([]string, len(t.cols))
	for i := range row {
		if i < len(cells) {
			row[i] = cell(cells[i])
		}
	}
	t.rows = append(t.rows, row)
}

// Len is the number of rows.
func (t *Table) Len() int { return len(t.rows) }

// Render writes the table, with its wide columns when wide is set.
func (t *Table) Render(w io.Writer, wide bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	show := make([]bool, len(t.cols))
	var hdr []string
	last := -1
	for i, c := range t.cols {
		show[i] = wide || !c.Wide
		if show[i] {
			hdr = append(hdr, strings.ToUpper(c.Header))
			last = i
		}
	}
	if _, err := io.WriteString(tw, strings.Join(hdr, "\t")+"\n"); err != nil {
		return err
	}
	for _, r := range t.rows {
		var line []string
		for i, v := range r {
			switch {
			case i == last:
				line = append(line, QuoteLine(v))
			case show[i]:
				line = append(line, Quote(v))
			}
		}
		if _, err := io.WriteString(tw, strings.Join(line, "\t")+"\n"); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// String renders the table as text (wide or not).
func (t *Table) String(wide bool) string {
	var b strings.Builder
	_ = t.Render(&b, wide) // a strings.Builder does not fail
	return b.String()
}

// Block is a labelled record for people: "Label:  value" lines aligned
// on their values, as kubectl describe prints, with sections of indented
// lines or tables under a heading.
type Block struct {
	b  strings.Builder
	tw *tabwriter.Writer
}

// NewBlock returns an empty block.
func NewBlock() *Block {
	bl := &Block{}
	bl.tw = tabwriter.NewWriter(&bl.b, 0, 0, 2, ' ', 0)
	return bl
}

// Field adds "label:  value", the value quoted when needed (QuoteLine: an
// empty one prints as "", inner spaces need no quotes).
func (bl *Block) Field(label string, v any) {
	fmt.Fprintf(bl.tw, "%s:\t%s\n", label, QuoteLine(cell(v)))
}

// Section adds a heading and text indented under it (a table, lines); an
// empty body prints "<heading>: none".
func (bl *Block) Section(heading, body string) {
	bl.flush()
	body = strings.TrimRight(body, "\n")
	if body == "" {
		fmt.Fprintf(&bl.b, "%s: none\n", heading)
		return
	}
	fmt.Fprintf(&bl.b, "%s:\n", heading)
	for _, l := range strings.Split(body, "\n") {
		fmt.Fprintf(&bl.b, "  %s\n", l)
	}
}

func (bl *Block) flush() {
	_ = bl.tw.Flush()
	bl.tw = tabwriter.NewWriter(&bl.b, 0, 0, 2, ' ', 0)
}

// String is the block's text.
func (bl *Block) String() string {
	bl.flush()
	return bl.b.String()
}
