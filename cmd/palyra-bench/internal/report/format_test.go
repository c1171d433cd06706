package report

import (
	"math"
	"testing"
)

func TestFormatNumber(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{1, "1"},
		{1.5, "1.5"},
		{1.504, "1.5"},
		{1.506, "1.51"},
		{12.34, "12.3"},
		{99.95, "100"},
		{123.4, "123"},
		{999.4, "999"},
		{999.6, "1,000"}, // rounds up into the grouped form
		{1000, "1,000"},
		{5210.4, "5,210"},
		{5210.7, "5,211"},
		{1234567.89, "1,234,568"},
		{0.42, "0.42"},
		{0.4213, "0.421"},
		{0.001234, "0.00123"},
		{0.0001, "0.0001"},
		{0.0000123, "1.23e-05"},
		{-12.34, "-12.3"},
		{-5210.4, "-5,210"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
	}
	for _, tt := range tests {
		if got := FormatNumber(tt.in); got != tt.want {
			t.Errorf("FormatNumber(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatValueAndRatio(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"value with unit", FormatValue(41.23, "µs"), "41.2 µs"},
		{"rate grouped", FormatValue(5210.4, "calls/s"), "5,210 calls/s"},
		{"no unit", FormatValue(3, ""), "3"},
		{"ratio", FormatRatio(0.42), "0.42×"},
		{"large ratio", FormatRatio(312.6), "313×"},
		{"no ratio", FormatRatio(0), "—"},
		{"measurement with p99 and name", formatMeasurement(Measurement{Name: "wazero", Unit: "ms", Median: 1.234, P99: 2}), "wazero: 1.23 ms / 2 ms"},
		{"measurement without p99", formatMeasurement(Measurement{Unit: "MiB", Median: 212.25}), "212 MiB"},
		{"goal text kept", goalText(Goal{Text: "≤ 0.6 × wasmtime", On: OnRatio, Op: AtMost, Target: 0.6}, "µs"), "≤ 0.6 × wasmtime"},
		{"goal on ratio built", goalText(Goal{On: OnRatio, Op: AtMost, Target: 0.6}, "µs"), "≤ 0.6×"},
		{"goal on value built", goalText(Goal{On: OnValue, Op: AtLeast, Target: 4000}, "calls/s"), "≥ 4,000 calls/s"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestMarkdownEscaping(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"pipe", tableCell("a|b"), `a\|b`},
		{"html", tableCell("<b>x</b>"), `\<b>x\</b>`},
		{"newline", tableCell("line one\nline two\r\n"), "line one line two"},
		{"empty", tableCell(""), " "},
		{"plain code", codeSpan("go run ."), "`go run .`"},
		{"code with backticks", codeSpan("echo `a` ``b``"), "``` echo `a` ``b`` ```"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
