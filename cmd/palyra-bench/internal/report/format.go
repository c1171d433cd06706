package report

import (
	"math"
	"strconv"
	"strings"
)

// sigDigits is how many significant digits numbers below 1000 are shown with.
const sigDigits = 3

// FormatNumber formats v for a human reader: numbers of magnitude 1000 or
// more are rounded to an integer and grouped by thousands with commas
// ("5,210", "1,234,568"); smaller numbers are rounded to three significant
// digits with trailing zeros dropped ("12.3", "0.42", "1.5", "0.00123"),
// in exponent notation below 0.0001 ("1.23e-05").
// Zero is "0", NaN is "NaN" and the infinities are "+Inf" and "-Inf".
func FormatNumber(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == 0:
		return "0"
	}
	sign := ""
	if v < 0 {
		sign = "-"
		v = -v
	}
	// Round to three significant digits first: 999.6 becomes 1000, which
	// then belongs to the grouped-integer form.
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'e', sigDigits-1, 64), 64)
	if err != nil { // cannot happen: FormatFloat output always parses
		r = v
	}
	if r >= 1000 {
		return sign + groupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	}
	if r < 1e-4 {
		// Too small for fixed notation to stay readable: "1.23e-05".
		return sign + strconv.FormatFloat(r, 'g', sigDigits, 64)
	}
	// Decimals needed for three significant digits: 2 for [1, 10), 1 for
	// [10, 100), 0 for [100, 1000), 3 for [0.1, 1), ...
	decimals := sigDigits - 1 - int(math.Floor(math.Log10(r)))
	s := strconv.FormatFloat(r, 'f', max(decimals, 0), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return sign + s
}

// groupThousands inserts a comma every three digits of a string of digits.
func groupThousands(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	head := len(digits) % 3
	if head > 0 {
		b.WriteString(digits[:head])
	}
	for i := head; i < len(digits); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}

// FormatValue formats v with [FormatNumber] followed by a space and unit,
// e.g. "12.3 µs" or "5,210 calls/s". An empty unit adds nothing.
func FormatValue(v float64, unit string) string {
	if unit == "" {
		return FormatNumber(v)
	}
	return FormatNumber(v) + " " + unit
}

// FormatRatio formats a ratio with [FormatNumber] and a "×" sign, e.g.
// "0.42×"; a ratio of 0 means none and gives "—".
func FormatRatio(r float64) string {
	if r == 0 {
		return "—"
	}
	return FormatNumber(r) + "×"
}

// formatMeasurement gives "median / p99" with units, or the median alone when
// P99 is not applicable, prefixed by the name when there is one:
// "wasmtime-go: 5.1 µs / 7.02 µs".
func formatMeasurement(m Measurement) string {
	s := FormatValue(m.Median, m.Unit)
	if m.P99 != 0 {
		s += " / " + FormatValue(m.P99, m.Unit)
	}
	if m.Name != "" {
		s = m.Name + ": " + s
	}
	return s
}

// opSymbol maps a goal operator to its mathematical sign.
func opSymbol(op string) string {
	switch op {
	case AtMost:
		return "≤"
	case AtLeast:
		return "≥"
	default:
		return op
	}
}

// goalText returns g.Text, or when it is empty a description built from the
// goal: "≤ 0.6×" for a ratio goal, "≥ 4,000 calls/s" for a value goal in unit.
func goalText(g Goal, unit string) string {
	if g.Text != "" {
		return g.Text
	}
	if g.On == OnRatio {
		return opSymbol(g.Op) + " " + FormatRatio(g.Target)
	}
	return opSymbol(g.Op) + " " + FormatValue(g.Target, unit)
}

// metMark returns ✓, ✗ or — for a goal met, not met, or absent or not
// evaluable.
func metMark(met *bool) string {
	switch {
	case met == nil:
		return "—"
	case *met:
		return "✓"
	default:
		return "✗"
	}
}
