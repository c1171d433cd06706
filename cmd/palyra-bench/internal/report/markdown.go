package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Markdown writes the report as GitHub-flavoured Markdown: a header with the
// machine, versions, command and run time; one table with a row per [Row]
// (Scenario | What | Ours | Peer | Ratio ours/peer | Goal | Met); then the
// row notes and the report notes as a list. It returns an error wrapping
// [ErrInvalid] for an invalid report, before writing anything.
func (r *Report) Markdown(w io.Writer) error {
	if err := r.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	r.writeMarkdown(bw)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write markdown: %w", err)
	}
	return nil
}

// writeMarkdown renders the validated report; write errors surface at Flush.
func (r *Report) writeMarkdown(w *bufio.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "# palyra-bench report\n\n")
	fmt.Fprintf(w, "- Machine: %s/%s, %d cores, %s\n", m.OS, m.Arch, m.Cores, orUnknown(m.CPUModel))
	fmt.Fprintf(w, "- Go: %s\n", orUnknown(m.GoVersion))
	if len(m.Versions) > 0 {
		fmt.Fprintf(w, "- Versions:\n")
		for _, mod := range slices.Sorted(maps.Keys(m.Versions)) {
			fmt.Fprintf(w, "  - %s %s\n", mod, m.Versions[mod])
		}
	}
	if r.Command != "" {
		fmt.Fprintf(w, "- Command: %s\n", codeSpan(r.Command))
	}
	mode := "full"
	if r.Quick {
		mode = "quick (indicative figures only)"
	}
	fmt.Fprintf(w, "- Mode: %s\n", mode)
	if !r.Started.IsZero() {
		fmt.Fprintf(w, "- Started: %s\n", r.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	fmt.Fprintf(w, "- Duration: %s\n", r.Duration.Round(100*time.Millisecond))

	fmt.Fprintf(w, "\n| Scenario | What | Ours (median / p99) | Peer (median / p99) | Ratio ours/peer | Goal | Met |\n")
	fmt.Fprintf(w, "|---|---|---|---|--:|---|:-:|\n")
	for _, row := range r.Rows {
		peer, goal := "—", "—"
		if row.Peer != nil {
			peer = formatMeasurement(*row.Peer)
		}
		if row.Goal != nil {
			goal = goalText(*row.Goal, row.Ours.Unit)
		}
		cells := []string{
			row.Scenario,
			row.Title,
			formatMeasurement(row.Ours),
			peer,
			FormatRatio(row.ratio()),
			goal,
			metMark(row.GoalMet()),
		}
		for i, c := range cells {
			cells[i] = tableCell(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintf(w, "\nRatio = our median ÷ the peer's median: for times and sizes below 1× is better, "+
		"for rates (calls/s) above 1× is better. Met: ✓ goal met, ✗ goal missed, — no goal or no ratio.\n")

	var notes []string
	for _, row := range r.Rows {
		if row.Note != "" {
			notes = append(notes, row.Scenario+": "+row.Note)
		}
	}
	notes = append(notes, r.Notes...)
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n## Notes\n\n")
		for _, n := range notes {
			fmt.Fprintf(w, "- %s\n", oneLine(n))
		}
	}
}

// tableCell makes s safe inside a Markdown table cell: one line, with pipes
// escaped, "<" escaped so that no name is taken for an HTML tag, and an empty
// cell shown as a blank.
func tableCell(s string) string {
	s = cellEscaper.Replace(oneLine(s))
	if s == "" {
		return " "
	}
	return s
}

// cellEscaper backslash-escapes the characters that would end a cell or
// start inline HTML.
var cellEscaper = strings.NewReplacer("|", `\|`, "<", `\<`)

// oneLine replaces line breaks with spaces, so that s cannot end a table row
// or list item early.
func oneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " ")
}

// codeSpan wraps s in a Markdown code span whose backtick fence is longer
// than any run of backticks inside s.
func codeSpan(s string) string {
	s = oneLine(s)
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 {
		return fence + " " + s + " " + fence // spaces keep edge backticks apart from the fence
	}
	return fence + s + fence
}

// orUnknown returns s, or "unknown" when s is empty.
func orUnknown(s string) string {
	if s == "" {
		return unknownCPU
	}
	return s
}
