package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
)

// Chart geometry, in SVG user units (pixels at 100 %).
//
// The ratio axis is logarithmic, from 0.01× to 100×, and every bar grows from
// the 1× line: left when we are below the peer, right when above. A log axis
// is the honest scale for ratios: 0.5× and 2× are equally far from parity,
// and a 40× gap does not squash every other bar into a few pixels as it
// would on a linear axis. Four decades cover the plausible range of this
// benchmark (a gRPC round trip against an in-process call is ~10–100×);
// ratios outside it are clamped to the edge but still printed exactly.
const (
	svgWidth      = 820.0
	svgTextX      = 20.0  // left edge of labels and text lines
	plotLeft      = 100.0 // x of 0.01×
	plotRight     = 700.0 // x of 100×
	axisMinLog10  = -2.0  // 0.01×
	axisMaxLog10  = 2.0   // 100×
	headerHeight  = 76.0  // title, subtitle and axis labels
	rowHeight     = 42.0  // label line plus bar
	barOffset     = 20.0  // from the top of a row block to its bar
	barHeight     = 14.0
	lineHeight    = 18.0 // text lines below the chart
	minBarWidth   = 1.5  // so that a ratio of exactly 1× stays visible
	colorMet      = "#2e7d32"
	colorMissed   = "#c62828"
	colorNeutral  = "#90a4ae"
	colorGrid     = "#dddddd"
	colorText     = "#222222"
	colorSubtitle = "#555555"
)

// SVG writes the ratio bar chart as a standalone SVG 1.1 document: one
// horizontal bar per row with a peer, on a log10 axis from 0.01× to 100× with
// the 1× line marked, the ratio printed at the end of each bar, and the goal
// drawn as a black tick when it is on the ratio. Bars are green when the goal
// is met, red when missed, grey when the row has no ratio goal. Rows without a
// peer are listed below the chart as text lines ("D: title — 5,210 calls/s
// (goal ≥ 4,000 calls/s) ✓"). It returns an error wrapping [ErrInvalid] for an
// invalid report, before writing anything.
func (r *Report) SVG(w io.Writer) error {
	if err := r.Validate(); err != nil {
		return err
	}
	var buf bytes.Buffer
	r.writeSVG(&buf)
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("report: write svg: %w", err)
	}
	return nil
}

// writeSVG renders the validated report into buf.
func (r *Report) writeSVG(buf *bytes.Buffer) {
	var charted, listed []Row
	for _, row := range r.Rows {
		if row.Peer != nil {
			charted = append(charted, row)
		} else {
			listed = append(listed, row)
		}
	}

	height := headerHeight + float64(max(len(charted), 1))*rowHeight + lineHeight
	if len(listed) > 0 {
		height += lineHeight * float64(len(listed)+1)
	}
	height += 10 // bottom margin

	fmt.Fprintf(buf, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(buf, `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%s" height="%s" viewBox="0 0 %s %s" font-family="sans-serif" font-size="12" fill="%s">`+"\n",
		num(svgWidth), num(height), num(svgWidth), num(height), colorText)
	buf.WriteString("<title>palyra-bench: ratio ours/peer per scenario (log scale)</title>\n")
	fmt.Fprintf(buf, `<rect x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", num(svgWidth), num(height))
	svgText(buf, svgTextX, 24, `font-size="16" font-weight="bold"`, "Ratio ours/peer (median), log scale")
	svgText(buf, svgTextX, 42, `font-size="11" fill="`+colorSubtitle+`"`, r.subtitle())

	if len(charted) == 0 {
		svgText(buf, svgTextX, headerHeight+14, "", "No row has a peer to compare with.")
	} else {
		writeAxis(buf, headerHeight-4, headerHeight+float64(len(charted))*rowHeight)
		for i, row := range charted {
			writeBar(buf, headerHeight+float64(i)*rowHeight, row)
		}
	}
	y := headerHeight + float64(max(len(charted), 1))*rowHeight + 12
	svgText(buf, svgTextX, y, `font-size="11" fill="`+colorSubtitle+`"`,
		"Bars start at 1×. Green: goal met; red: goal missed; grey: no goal on the ratio. Black tick: the goal.")

	if len(listed) > 0 {
		y += lineHeight + 6
		svgText(buf, svgTextX, y, `font-weight="bold"`, "Absolute figures")
		for _, row := range listed {
			y += lineHeight
			svgText(buf, svgTextX, y, "", absoluteLine(row))
		}
	}
	buf.WriteString("</svg>\n")
}

// subtitle describes the machine and the kind of run in one line.
func (r *Report) subtitle() string {
	m := r.Machine
	parts := []string{
		fmt.Sprintf("%s/%s", m.OS, m.Arch),
		fmt.Sprintf("%d cores", m.Cores),
		orUnknown(m.CPUModel),
		orUnknown(m.GoVersion),
	}
	if r.Quick {
		parts = append(parts, "quick run (indicative)")
	} else {
		parts = append(parts, "full run")
	}
	return strings.Join(parts, " · ")
}

// writeAxis draws the decade grid lines from top to bottom, labelled above,
// with the 1× line emphasised.
func writeAxis(buf *bytes.Buffer, top, bottom float64) {
	for e := axisMinLog10; e <= axisMaxLog10; e++ {
		x := ratioX(math.Pow(10, e))
		stroke, width := colorGrid, "1"
		if e == 0 {
			stroke, width = colorText, "1.5"
		}
		fmt.Fprintf(buf, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"/>`+"\n",
			num(x), num(top), num(x), num(bottom), stroke, width)
		svgText(buf, x, top-6, `text-anchor="middle" font-size="11"`, FormatRatio(math.Pow(10, e)))
	}
}

// writeBar draws one charted row whose block starts at y.
func writeBar(buf *bytes.Buffer, y float64, row Row) {
	label := row.Scenario + ": " + row.Title
	if row.Goal != nil && row.Goal.On == OnValue {
		// The bar cannot show a goal on our own value; the label does.
		label += " (goal " + goalText(*row.Goal, row.Ours.Unit) + " " + metMark(row.GoalMet()) + ")"
	}
	svgText(buf, svgTextX, y+14, "", label)
	barY := y + barOffset
	ratio := row.ratio()
	if ratio == 0 {
		svgText(buf, ratioX(1)+5, barY+barHeight-3, `fill="`+colorSubtitle+`"`, "no ratio")
		return
	}

	color := colorNeutral
	if row.Goal != nil && row.Goal.On == OnRatio {
		if row.Goal.Met(row) {
			color = colorMet
		} else {
			color = colorMissed
		}
	}
	one, end := ratioX(1), ratioX(ratio)
	x, width := math.Min(one, end), math.Abs(end-one)
	if width < minBarWidth {
		width = minBarWidth
		if ratio < 1 {
			x = one - width
		}
	}
	fmt.Fprintf(buf, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s">`,
		num(x), num(barY), num(width), num(barHeight), color)
	buf.WriteString("<title>")
	escapeTo(buf, fmt.Sprintf("ours %s, peer %s", formatMeasurement(row.Ours), formatMeasurement(*row.Peer)))
	buf.WriteString("</title></rect>\n")

	// The value goes past the bar's end, and past the goal tick when the
	// tick lies beyond the end on the same side, so the two never overlap.
	right, left := x+width, x
	hasTick := row.Goal != nil && row.Goal.On == OnRatio
	gx := 0.0
	if hasTick {
		gx = ratioX(row.Goal.Target)
		right, left = math.Max(right, gx+1), math.Min(left, gx-1)
	}
	if ratio >= 1 {
		svgText(buf, right+5, barY+barHeight-3, `font-weight="bold"`, FormatRatio(ratio))
	} else {
		svgText(buf, left-5, barY+barHeight-3, `text-anchor="end" font-weight="bold"`, FormatRatio(ratio))
	}

	if hasTick {
		fmt.Fprintf(buf, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#000000" stroke-width="2">`,
			num(gx), num(barY-4), num(gx), num(barY+barHeight+4))
		buf.WriteString("<title>goal ")
		escapeTo(buf, goalText(*row.Goal, row.Ours.Unit))
		buf.WriteString("</title></line>\n")
	}
}

// absoluteLine describes a row without a peer in one line.
func absoluteLine(row Row) string {
	s := row.Scenario + ": "
	if row.Title != "" {
		s += row.Title + " — "
	}
	s += formatMeasurement(row.Ours)
	if row.Goal != nil {
		s += " (goal " + goalText(*row.Goal, row.Ours.Unit) + ") " + metMark(row.GoalMet())
	}
	return oneLine(s)
}

// ratioX maps a positive ratio to its x coordinate, clamped to the axis.
func ratioX(ratio float64) float64 {
	e := math.Log10(ratio)
	e = math.Max(axisMinLog10, math.Min(axisMaxLog10, e))
	return plotLeft + (e-axisMinLog10)/(axisMaxLog10-axisMinLog10)*(plotRight-plotLeft)
}

// svgText writes a <text> element at (x, y) with extra attributes attrs
// (trusted, written as is) and the escaped content s.
func svgText(buf *bytes.Buffer, x, y float64, attrs, s string) {
	fmt.Fprintf(buf, `<text x="%s" y="%s"`, num(x), num(y))
	if attrs != "" {
		buf.WriteString(" " + attrs)
	}
	buf.WriteString(">")
	escapeTo(buf, s)
	buf.WriteString("</text>\n")
}

// escapeTo writes s to buf escaped for XML character data and attributes.
func escapeTo(buf *bytes.Buffer, s string) {
	_ = xml.EscapeText(buf, []byte(s)) // a bytes.Buffer write never fails
}

// num formats a coordinate with at most one decimal, deterministically.
func num(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}
