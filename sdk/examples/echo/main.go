// Command echo is the smallest Palyra-Go skill: two text tools and no
// capabilities. Build it (from the repository root) with:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o echo.wasm ./sdk/examples/echo
package main

import (
	"strings"

	"github.com/palyra-go/palyra/sdk/go/skill"
)

// TextIn is the input of both tools.
type TextIn struct {
	Text string `json:"text"`
}

// EchoOut is the output of palyra.echo.
type EchoOut struct {
	Echo string `json:"echo"`
}

// UpperOut is the output of palyra.upper.
type UpperOut struct {
	Text string `json:"text"`
}

// Handlers are registered in init: a c-shared reactor runs package init
// functions in _initialize, and never runs main.
func init() {
	skill.Handle("palyra.echo", echo)
	skill.Handle("palyra.upper", upper)
}

// echo returns its input text unchanged and logs its length.
func echo(ctx *skill.Context, in TextIn) (EchoOut, error) {
	ctx.Logf(skill.LevelInfo, "echo: %d bytes", len(in.Text))
	return EchoOut{Echo: in.Text}, nil
}

// upper returns the text in upper case. An empty text is the tool error
// empty_text, so callers can see a guest-reported error code.
func upper(_ *skill.Context, in TextIn) (UpperOut, error) {
	if in.Text == "" {
		return UpperOut{}, skill.NewError("empty_text", "text is empty")
	}
	return UpperOut{Text: strings.ToUpper(in.Text)}, nil
}

func main() {}
