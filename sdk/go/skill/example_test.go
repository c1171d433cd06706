package skill_test

import (
	"fmt"

	"github.com/palyra-go/palyra/sdk/go/skill"
	"github.com/palyra-go/palyra/sdk/go/skill/skilltest"
)

func ExampleTyped() {
	type In struct {
		Text string `json:"text"`
	}
	type Out struct {
		Echo string `json:"echo"`
	}
	mux := skill.NewMux() // a skill uses skill.Handle, which registers with DefaultMux
	mux.Handle("acme.echo", skill.Typed(func(ctx *skill.Context, in In) (Out, error) {
		if in.Text == "" {
			return Out{}, skill.NewError("empty_text", "text is empty")
		}
		return Out{Echo: in.Text}, nil
	}))

	res := skilltest.Run(mux, skilltest.Call{ToolID: "acme.echo", Input: In{Text: "hello"}})
	fmt.Println(res.Status, string(res.Output))

	res = skilltest.Run(mux, skilltest.Call{ToolID: "acme.echo", Input: In{}})
	fmt.Println(res.Status, string(res.Output))
	// Output:
	// 0 {"echo":"hello"}
	// 1 {"code":"empty_text","message":"text is empty"}
}

func ExampleHTTPClient_Get() {
	mux := skill.NewMux()
	mux.Handle("acme.fetch", skill.Typed(func(ctx *skill.Context, url string) (int, error) {
		resp, err := ctx.HTTP().Get(url, skill.SecretHeader{Name: "authorization", Secret: "api_token", Format: "Bearer {secret}"})
		if err != nil {
			return 0, err
		}
		return resp.Status, nil
	}))
	backend := skilltest.BackendFunc(func(req skilltest.Request) skilltest.Response {
		fmt.Printf("handle %d (%s): %s\n", req.Handle, req.Name, req.Body)
		return skilltest.OK(map[string]any{"status": 200, "headers": map[string]string{}, "body_base64": ""})
	})
	res := skilltest.Run(mux, skilltest.Call{
		ToolID:  "acme.fetch",
		Input:   "https://api.example.com/v1",
		Grants:  skilltest.Grants{HTTP: []string{"api.example.com"}, Secrets: []string{"skill:acme.fetch/api_token"}},
		Backend: backend,
	})
	fmt.Println(res.Status, string(res.Output))
	// Output:
	// handle 10000 (api.example.com): {"method":"GET","url":"https://api.example.com/v1","secret_headers":[{"name":"authorization","secret_handle":20000,"format":"Bearer {secret}"}]}
	// 0 200
}

// A tool bound as a run:before_tool hook blocks calls on weekends: the
// host fails the call with blocked_by_hook and this reason.
func ExampleBlock() {
	mux := skill.NewMux()
	mux.Handle("acme.guard.check", skill.Typed(func(_ *skill.Context, in struct {
		Payload struct {
			Weekday string `json:"weekday"`
		} `json:"payload"`
	}) (struct{}, error) {
		if in.Payload.Weekday == "Saturday" || in.Payload.Weekday == "Sunday" {
			return struct{}{}, skill.Block("no payments at weekends")
		}
		return struct{}{}, nil
	}))
	r := skilltest.Run(mux, skilltest.Call{ToolID: "acme.guard.check", Input: map[string]any{"payload": map[string]string{"weekday": "Sunday"}}})
	fmt.Println(r.Status, r.ErrorCode(), r.ErrorMessage())
	// Output: 30 hook_block no payments at weekends
}
