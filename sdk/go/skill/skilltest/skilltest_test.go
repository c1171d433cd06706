package skilltest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/sdk/go/skill"
	"github.com/palyra-go/palyra/sdk/go/skill/skilltest"
)

func TestMemoryStorageList(t *testing.T) {
	store := skilltest.NewMemoryStorage()
	mux := skill.NewMux()
	mux.Handle("t.list", func(ctx *skill.Context, _ json.RawMessage) (json.RawMessage, error) {
		st := ctx.Storage("data")
		for _, k := range []string{"p/c", "p/a", "q/x", "p/b"} {
			if err := st.Put(k, []byte(k)); err != nil {
				return nil, err
			}
		}
		var pages []string
		cursor := ""
		for {
			keys, next, err := st.List("p/", 2, cursor)
			if err != nil {
				return nil, err
			}
			pages = append(pages, strings.Join(keys, ","))
			if next == "" {
				break
			}
			cursor = next
		}
		deleted, err := st.Delete("p/a")
		if err != nil {
			return nil, err
		}
		again, err := st.Delete("p/a")
		if err != nil {
			return nil, err
		}
		return json.Marshal(fmt.Sprint(pages, deleted, again))
	})
	res := skilltest.Run(mux, skilltest.Call{ToolID: "t.list", Grants: skilltest.Grants{Storage: []string{"data"}}, Backend: store})
	var got string
	if err := res.Decode(&got); err != nil || res.Status != 0 {
		t.Fatalf("status %d output %s: %v", res.Status, res.Output, err)
	}
	if want := "[p/a,p/b p/c] true false"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if len(res.Requests) != 8 || res.Calls != 8 {
		t.Fatalf("%d requests, %d calls", len(res.Requests), res.Calls)
	}
}

func TestMemoryStorageRefusesOtherKinds(t *testing.T) {
	mux := skill.NewMux()
	mux.Handle("t.x", func(ctx *skill.Context, _ json.RawMessage) (json.RawMessage, error) {
		_, err := ctx.Channel("c").Send("x")
		return nil, err
	})
	res := skilltest.Run(mux, skilltest.Call{ToolID: "t.x", Grants: skilltest.Grants{Channels: []string{"c"}}, Backend: skilltest.NewMemoryStorage()})
	if res.Status == 0 || !strings.Contains(res.ErrorMessage(), "invalid_request") {
		t.Fatalf("status %d output %s", res.Status, res.Output)
	}
}

func TestResponses(t *testing.T) {
	if r := skilltest.OK(map[string]int{"a": 1}); r.Code != 0 || string(r.Body) != `{"a":1}` {
		t.Fatalf("OK = %+v", r)
	}
	if r := skilltest.OK(json.RawMessage(`[1]`)); string(r.Body) != `[1]` {
		t.Fatalf("OK(raw) = %+v", r)
	}
	if r := skilltest.OK(func() {}); r.Code != -9 {
		t.Fatalf("OK(unencodable) = %+v", r)
	}
	mux := skill.NewMux()
	mux.Handle("t.deny", func(ctx *skill.Context, _ json.RawMessage) (json.RawMessage, error) {
		_, err := ctx.HTTP().Get("http://127.0.0.1:9/")
		if !errors.Is(err, skill.ErrDenied) {
			return nil, fmt.Errorf("err = %v", err)
		}
		return nil, err
	})
	backend := skilltest.BackendFunc(func(skilltest.Request) skilltest.Response {
		return skilltest.Fail(-2, "private_address", "127.0.0.1 is loopback")
	})
	res := skilltest.Run(mux, skilltest.Call{ToolID: "t.deny", Grants: skilltest.Grants{HTTP: []string{"127.0.0.1"}}, Backend: backend})
	if res.ErrorCode() != "capability_denied" || res.ErrorMessage() != "skill: http GET (handle 10000) failed: denied (private_address): 127.0.0.1 is loopback" {
		t.Fatalf("output %s", res.Output)
	}
	if res.Requests[0].Name != "127.0.0.1" || res.Requests[0].Kind != "http" {
		t.Fatalf("request %+v", res.Requests[0])
	}
}
