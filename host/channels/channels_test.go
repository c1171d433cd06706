package channels_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/host/errcode"
)

func TestRegistry(t *testing.T) {
	r := channels.NewRegistry()
	var ps channels.PubSub
	if err := r.Register("ops.alerts", &ps); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("ops.alerts", &ps); !errors.Is(err, channels.ErrExists) {
		t.Fatalf("second Register: %v", err)
	}
	for _, bad := range []string{"", "Ops", "a b", "a/b", strings.Repeat("a", 129)} {
		if err := r.Register(bad, &ps); !errors.Is(err, channels.ErrInvalidName) {
			t.Errorf("Register(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
	sub, cancel := ps.Subscribe(4)
	defer cancel()
	id, err := r.Send(context.Background(), channels.Message{Channel: "ops.alerts", SkillID: "acme.x", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	m := <-sub
	if m.ID != id || len(id) != 32 || m.Text != "hello" || m.SkillID != "acme.x" || m.Time.IsZero() {
		t.Fatalf("delivered %+v (id %q)", m, id)
	}
	_, err = r.Send(context.Background(), channels.Message{Channel: "nope", Text: "x"})
	if !errors.Is(err, channels.ErrNotConfigured) || errcode.Of(err) != "channel_not_configured" {
		t.Fatalf("unknown channel: %v", err)
	}
	if got := r.Names(); len(got) != 1 || got[0] != "ops.alerts" {
		t.Fatalf("Names = %v", got)
	}
	if !r.Unregister("ops.alerts") || r.Unregister("ops.alerts") {
		t.Fatal("Unregister")
	}
}

func TestMessageValidate(t *testing.T) {
	tests := []struct {
		name string
		m    channels.Message
		want string
	}{
		{"empty", channels.Message{}, "neither text nor message"},
		{"text too long", channels.Message{Text: strings.Repeat("x", channels.MaxTextBytes+1)}, "65537 bytes, over the 65536-byte limit"},
		{"data too long", channels.Message{Data: json.RawMessage(`"` + strings.Repeat("x", channels.MaxDataBytes) + `"`)}, "over the 524288-byte limit"},
		{"data not JSON", channels.Message{Data: json.RawMessage(`{`)}, "not valid JSON"},
	}
	for _, tt := range tests {
		err := tt.m.Validate()
		if !errors.Is(err, channels.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	if err := (&channels.Message{Data: json.RawMessage(`{"a":1}`)}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestPubSubNeverBlocks(t *testing.T) {
	var ps channels.PubSub
	_, cancel := ps.Subscribe(1)
	defer cancel()
	for range 3 {
		if err := ps.Send(context.Background(), channels.Message{Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if ps.Dropped() != 2 {
		t.Fatalf("Dropped = %d, want 2", ps.Dropped())
	}
	cancel()
	cancel() // idempotent
}

func TestLog(t *testing.T) {
	var buf bytes.Buffer
	l := &channels.Log{Logger: hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true})}
	r := channels.NewRegistry()
	if err := r.Register("log", l); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Send(context.Background(), channels.Message{Channel: "log", SkillID: "acme.x", Text: strings.Repeat("y", 5000)}); err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	if rec["channel"] != "log" || rec["skill_id"] != "acme.x" || len(rec["text"].(string)) > 4200 {
		t.Fatalf("record %v", rec)
	}
}

// A webhook posts the message as JSON; a non-2xx status is a delivery error.
func TestWebhook(t *testing.T) {
	got := make(chan channels.Message, 1)
	status := http.StatusNoContent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m channels.Message
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &m) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got <- m
		w.WriteHeader(status)
	}))
	defer srv.Close()
	post := channels.PosterFunc(func(ctx context.Context, url, ct string, body []byte) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", ct)
		resp, err := srv.Client().Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	})
	r := channels.NewRegistry()
	if err := r.Register("hook", &channels.Webhook{URL: srv.URL, Poster: post}); err != nil {
		t.Fatal(err)
	}
	id, err := r.Send(context.Background(), channels.Message{Channel: "hook", SkillID: "acme.x", Data: json.RawMessage(`{"level":"high"}`)})
	if err != nil {
		t.Fatal(err)
	}
	m := <-got
	if m.ID != id || string(m.Data) != `{"level":"high"}` || m.Channel != "hook" {
		t.Fatalf("webhook got %+v", m)
	}
	status = http.StatusInternalServerError
	_, err = r.Send(context.Background(), channels.Message{Channel: "hook", Text: "x"})
	<-got
	if !errors.Is(err, channels.ErrDelivery) || !strings.Contains(err.Error(), "status 500") {
		t.Fatalf("500: %v", err)
	}
}

func TestParseConfig(t *testing.T) {
	specs, err := channels.ParseConfig([]byte(`
[[channels]]
name = "ops-alerts"
type = "webhook"
url = "https://hooks.example.com/palyra"

[[channels]]
name = "audit"
type = "log"
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 2 || specs[0].Type != channels.TypeWebhook || specs[1].Name != "audit" {
		t.Fatalf("specs %+v", specs)
	}
	bad := []struct{ doc, want string }{
		{"[[channels]]\nname = \"a\"\ntype = \"smtp\"", `channels[0].type: "smtp" is not one of`},
		{"[[channels]]\nname = \"A\"\ntype = \"log\"", "channels[0].name"},
		{"[[channels]]\nname = \"a\"\ntype = \"log\"\n[[channels]]\nname = \"a\"\ntype = \"log\"", `channels[1].name: "a" is declared twice`},
		{"[[channels]]\nname = \"a\"\ntype = \"webhook\"\nurl = \"ftp://x\"", "channels[0].url"},
		{"[[channels]]\nname = \"a\"\ntype = \"webhook\"\nurl = \"https://u:p@x/\"", "channels[0].url"},
		{"[[channels]]\nname = \"a\"\ntype = \"log\"\nurl = \"https://x/\"", "only a webhook"},
		{"[[channels]]\nname = \"a\"\ntype = \"log\"\ncolour = 1", "unknown key"},
		{"[[channels]", "channel_config_invalid"},
	}
	for _, b := range bad {
		_, err := channels.ParseConfig([]byte(b.doc))
		if !errors.Is(err, channels.ErrInvalidConfig) || !strings.Contains(err.Error()+" "+errcode.Of(err), b.want) {
			t.Errorf("%q: %v, want %q", b.doc, err, b.want)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("[[channels]]\nname = \"a\"\ntype = \"webhook\"\nurl = \"https://x/\""))
	f.Add([]byte("[[channels]]\nname = \"a\"\ntype = \"log\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		specs, err := channels.ParseConfig(data)
		if err != nil {
			return
		}
		for _, s := range specs {
			if channels.ValidateName(s.Name) != nil {
				t.Fatalf("accepted bad name %q", s.Name)
			}
			if s.Type != channels.TypeLog && s.Type != channels.TypeWebhook && s.Type != channels.TypePubSub {
				t.Fatalf("accepted type %q", s.Type)
			}
		}
	})
}
