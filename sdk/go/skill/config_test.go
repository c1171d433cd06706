package skill_test

import (
	"encoding/json"
	"testing"

	"github.com/palyra-go/palyra/sdk/go/skill"
	"github.com/palyra-go/palyra/sdk/go/skill/skilltest"
)

// TestConfig: a handler reads the call's config raw and typed; a call
// given no config reads {}; a config that is not JSON is an abi_error.
func TestConfig(t *testing.T) {
	type cfg struct {
		Endpoint string `json:"endpoint"`
		Retries  int    `json:"retries"`
	}
	mux := skill.NewMux()
	mux.Handle("acme.raw", func(c *skill.Context, _ json.RawMessage) (json.RawMessage, error) {
		return c.Config()
	})
	mux.Handle("acme.typed", skill.Typed(func(c *skill.Context, _ struct{}) (cfg, error) {
		var v cfg
		err := c.ConfigInto(&v)
		return v, err
	}))
	for _, tc := range []struct {
		name, tool string
		config     any
		output     string
		errorCode  string
	}{
		{"raw", "acme.raw", json.RawMessage(`{"endpoint":"https://e","retries":2}`), `{"endpoint":"https://e","retries":2}`, ""},
		{"typed", "acme.typed", map[string]any{"endpoint": "https://e", "retries": 2}, `{"endpoint":"https://e","retries":2}`, ""},
		{"none", "acme.raw", nil, `{}`, ""},
		{"not json", "acme.typed", []byte(`{nope`), "", skill.CodeABIError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := skilltest.Run(mux, skilltest.Call{ToolID: tc.tool, Input: map[string]any{}, Config: tc.config})
			if tc.errorCode != "" {
				if res.ErrorCode() != tc.errorCode {
					t.Fatalf("error code %q (%s), want %q", res.ErrorCode(), res.ErrorMessage(), tc.errorCode)
				}
				return
			}
			if res.Status != 0 || string(res.Output) != tc.output {
				t.Fatalf("status %d output %s (%s), want %s", res.Status, res.Output, res.ErrorMessage(), tc.output)
			}
		})
	}
}
