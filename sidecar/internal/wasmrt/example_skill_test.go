package wasmrt_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// TestExampleEcho runs both tools of sdk/examples/echo, built with the SDK,
// end to end (its skill.toml names the skill; the schemas are the host's to
// check).
func TestExampleEcho(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the echo example")
	}
	wasm, err := os.ReadFile(examplebuild.MustBuild(t, "echo"))
	if err != nil {
		t.Fatal(err)
	}
	toml, err := os.ReadFile(filepath.Join(examplebuild.MustDir(t, "echo"), "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	man, err := manifest.Parse(toml)
	if err != nil {
		t.Fatal(err)
	}
	e := goEngine(t)
	for _, prepared := range []int{0, 2} {
		m := load(t, e, wasm, wasmrt.ModuleConfig{PreparedInstances: prepared})
		call := func(tool, input string) (*wasmrt.Result, error) {
			return invoke(t, m, wasmrt.Invocation{ID: "inv-1", SkillID: man.SkillID, ToolID: tool,
				Input: json.RawMessage(input)})
		}
		res, err := call("palyra.echo", `{"text":"héllo"}`)
		if err != nil || string(res.Output) != `{"echo":"héllo"}` {
			t.Fatalf("echo: %s %v", res.Output, err)
		}
		if len(res.Logs) != 1 || res.Logs[0].Message != "echo: 6 bytes" {
			t.Fatalf("echo logs %+v", res.Logs)
		}
		res, err = call("palyra.upper", `{"text":"abc"}`)
		if err != nil || string(res.Output) != `{"text":"ABC"}` {
			t.Fatalf("upper: %s %v", res.Output, err)
		}
		_, err = call("palyra.upper", `{"text":""}`)
		var te *wasmrt.ToolError
		if !errors.As(err, &te) || te.Code != "empty_text" {
			t.Fatalf("upper of empty text: %v", err)
		}
		if _, err = call("palyra.nope", `{}`); !errors.Is(err, wasmrt.ErrToolError) {
			t.Fatalf("unknown tool: %v", err)
		}
	}
}
