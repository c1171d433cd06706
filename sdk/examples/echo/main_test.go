package main

import (
	"testing"

	"github.com/palyra-go/palyra/sdk/go/skill"
	"github.com/palyra-go/palyra/sdk/go/skill/skilltest"
)

// TestTools runs both tools natively, through the handlers init registered
// on skill.DefaultMux: the layout sdk/go/skill recommends (no wasip1 build
// constraint on the handlers' file).
func TestTools(t *testing.T) {
	tests := []struct {
		tool, text string
		status     int32
		want, code string
	}{
		{"palyra.echo", "Hello", 0, `{"echo":"Hello"}`, ""},
		{"palyra.echo", "", 0, `{"echo":""}`, ""},
		{"palyra.upper", "Hello", 0, `{"text":"HELLO"}`, ""},
		{"palyra.upper", "", 1, "", "empty_text"},
		{"palyra.nope", "x", 1, "", "unknown_tool"},
	}
	for _, tt := range tests {
		res := skilltest.Run(skill.DefaultMux, skilltest.Call{ToolID: tt.tool, SkillID: "palyra.echo", Input: TextIn{Text: tt.text}})
		if res.Status != tt.status || res.ErrorCode() != tt.code || tt.want != "" && string(res.Output) != tt.want {
			t.Errorf("%s %q: status %d code %q output %s, want %d %q %s", tt.tool, tt.text, res.Status, res.ErrorCode(), res.Output, tt.status, tt.code, tt.want)
		}
	}
}
