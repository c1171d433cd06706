package e2e_test

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/broker"
	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/internal/testskill"
)

//go:embed testdata/memdump.wasm
var memdumpWasm []byte

//go:embed testdata/notify.wasm
var notifyWasm []byte

const memdumpManifest = `manifest_version = 2
skill_id = "acme.memdump"
name = "Memory dump"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.dump"
name = "dump"
description = "Fetches a URL with an injected token and dumps its memory"
input_schema = { type = "object" }
output_schema = { type = "object" }

[capabilities]
http_egress_allowlist = ["api.example.com"]

[[capabilities.secrets]]
scope = "skill:acme.memdump"
key_names = ["api_token"]

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`

// The guest reads its whole memory after a request with an injected
// secret: the secret is nowhere in it, nor in its output, while the server
// received it.
func TestInjectedSecretNeverEntersTheSandbox(t *testing.T) {
	const secret = "s3cr3t-9d8e7f6a5b4c"
	got := make(chan string, 1)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		fmt.Fprint(w, "echo: "+r.Header.Get("X-Request-Id"))
	})
	h := openHost(t, t.TempDir(), testProfile(t, srv.port, ""))
	setSecret(t, h, "skill:acme.memdump/api_token", secret)
	installArtifact(t, h, testskill.Build(t, memdumpManifest, memdumpWasm, publisherKey))
	res, err := h.Call(context.Background(), host.CallRequest{SkillID: "acme.memdump", ToolID: "acme.dump", Input: json.RawMessage(fmt.Sprintf(`{"url":%q}`, srv.url("api.example.com", "/")))})
	if err != nil {
		t.Fatalf("%v %s", err, outputOf(res))
	}
	if a := <-got; a != "Bearer "+secret {
		t.Fatalf("server got authorization %q", a)
	}
	var out struct {
		Dump string `json:"dump"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	mem, err := hex.DecodeString(out.Dump)
	if err != nil || len(mem) != 65536 {
		t.Fatalf("dump: %d bytes, %v", len(mem), err)
	}
	// The dump holds the request the guest built and the response it read.
	if !bytes.Contains(mem, []byte(`"format":"Bearer {secret}"`)) || !bytes.Contains(mem, []byte(`"status":200`)) {
		t.Fatalf("the dump lacks the request or the response:\n%q", bytes.Trim(mem[9216:9216+256], "\x00"))
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(secret))
	for _, needle := range []string{secret, b64, hex.EncodeToString([]byte(secret))} {
		if bytes.Contains(mem, []byte(needle)) || strings.Contains(string(res.Output), needle) {
			t.Fatalf("the secret (as %q) is in the guest's memory or output", needle)
		}
	}
	for _, l := range res.Logs {
		if strings.Contains(l.Message, secret) {
			t.Fatal("the secret is in a guest log record")
		}
	}
}

// A secret the vault lacks is reported at install and, at call time, as
// a clear error naming it and the command that sets it.
func TestMissingSecret(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {})
	h := openHost(t, t.TempDir(), testProfile(t, srv.port, ""))
	res := installExample(t, h, "http-fetch", fetchWasm, nil)
	if len(res.MissingSecrets) != 1 || res.MissingSecrets[0].Scope != "skill:palyra.http_fetch" || res.MissingSecrets[0].Key != "api_token" {
		t.Fatalf("MissingSecrets = %+v", res.MissingSecrets)
	}
	out, err := approvedCall(context.Background(), t, h, host.CallRequest{SkillID: "palyra.http_fetch", ToolID: "palyra.http_fetch", Input: json.RawMessage(fmt.Sprintf(`{"url":%q,"use_token":true}`, srv.url("api.example.com", "/")))})
	if err == nil || out.ToolError == nil || out.ToolError.Code != "capability_unavailable" ||
		!strings.Contains(out.ToolError.Message, "secret skill:palyra.http_fetch/api_token has no value") ||
		!strings.Contains(out.ToolError.Message, "palyra secrets set skill:palyra.http_fetch/api_token") {
		t.Fatalf("err %v, result %s", err, outputOf(out))
	}
	if len(srv.hits) != 0 {
		t.Fatal("the request was sent without its secret")
	}
}

// kv-counter counts across calls, and across host and sidecar restarts.
func TestKVCounterSurvivesRestarts(t *testing.T) {
	state := t.TempDir()
	ctx := context.Background()
	type counter struct {
		Name  string `json:"name"`
		Count int64  `json:"count"`
	}
	h := openHost(t, state, testProfile(t, 443, ""))
	installExample(t, h, "kv-counter", counterWasm, nil)
	for want := int64(1); want <= 3; want++ {
		res, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.kv_counter", ToolID: "palyra.increment", Input: json.RawMessage(`{"name":"visits"}`)})
		if err != nil {
			t.Fatalf("increment %d: %v %s", want, err, outputOf(res))
		}
		var c counter
		if json.Unmarshal(res.Output, &c) != nil || c.Count != want {
			t.Fatalf("increment %d: %s", want, res.Output)
		}
	}
	st := h.Stats("palyra.kv_counter").Capabilities
	if st.StorageKeys != 1 || st.StorageBytes != int64(len("counters/visits")+1) {
		t.Fatalf("storage stats %+v", st)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// A new host: new sidecar processes, the store reopened from disk.
	h2 := openHost(t, state, testProfile(t, 443, ""))
	res, err := h2.Call(ctx, host.CallRequest{SkillID: "palyra.kv_counter", ToolID: "palyra.get", Input: json.RawMessage(`{"name":"visits"}`)})
	if err != nil || !strings.Contains(string(res.Output), `"count":3`) {
		t.Fatalf("after restart: %v %s", err, outputOf(res))
	}
}

// The storage quota of the operator's profile stops a skill's writes.
func TestStorageQuota(t *testing.T) {
	ctx := context.Background()
	h := openHost(t, t.TempDir(), testProfile(t, 443, "[storage]\nmax_keys_per_skill = 2\n"))
	installExample(t, h, "kv-counter", counterWasm, nil)
	for _, name := range []string{"a", "b"} {
		if res, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.kv_counter", ToolID: "palyra.increment", Input: json.RawMessage(`{"name":"` + name + `"}`)}); err != nil {
			t.Fatalf("%s: %v %s", name, err, outputOf(res))
		}
	}
	res, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.kv_counter", ToolID: "palyra.increment", Input: json.RawMessage(`{"name":"c"}`)})
	if !errors.Is(err, broker.ErrCapabilityDenied) || res == nil || res.ToolError == nil || res.ToolError.Code != "capability_quota_exceeded" ||
		!strings.Contains(err.Error(), "3 keys would pass the limit of 2") {
		t.Fatalf("third key: %v %s", err, outputOf(res))
	}
	// Updating an existing key is still allowed.
	if res, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.kv_counter", ToolID: "palyra.increment", Input: json.RawMessage(`{"name":"a"}`)}); err != nil || !strings.Contains(string(res.Output), `"count":2`) {
		t.Fatalf("update at quota: %v %s", err, outputOf(res))
	}
}

const notifyManifest = `manifest_version = 2
skill_id = "acme.notify"
name = "Notify"
version = "1.0.0"
publisher = "acme"

[[entrypoints.tools]]
id = "acme.notify"
name = "notify"
description = "Sends a message to its channel"
input_schema = { type = "object" }
output_schema = { type = "object" }

[capabilities]
channels = [%q]

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`

// channel.send reaches a channel the application registered, only when the
// manifest names it and the profile allows it.
func TestChannelSend(t *testing.T) {
	ctx := context.Background()
	h := openHost(t, t.TempDir(), testProfile(t, 443, "[channels]\nallowed = [\"ops.alerts\"]\n"))
	var ps channels.PubSub
	sub, cancel := ps.Subscribe(4)
	defer cancel()
	if err := h.Channels().Register("ops.alerts", &ps); err != nil {
		t.Fatal(err)
	}
	installArtifact(t, h, testskill.Build(t, fmt.Sprintf(notifyManifest, "ops.alerts"), notifyWasm, publisherKey))
	res, err := h.Call(ctx, host.CallRequest{SkillID: "acme.notify", ToolID: "acme.notify", Input: json.RawMessage(`{}`)})
	if err != nil || string(res.Output) != `{"delivered":true}` {
		t.Fatalf("%v %s", err, outputOf(res))
	}
	select {
	case m := <-sub:
		if m.Text != "disk 91% full" || m.SkillID != "acme.notify" || m.ToolID != "acme.notify" || m.InvocationID != res.InvocationID {
			t.Fatalf("message %+v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no message delivered")
	}
	if st := h.Stats("acme.notify").Capabilities; st.ChannelMessages != 1 {
		t.Fatalf("stats %+v", st)
	}
	// A channel the profile does not allow is a policy violation: the
	// skill is quarantined at install and never runs.
	data := testskill.Build(t, strings.Replace(fmt.Sprintf(notifyManifest, "payroll"), "acme.notify\"\nname = \"Notify\"", "acme.notify2\"\nname = \"Notify\"", 1), notifyWasm, publisherKey)
	ir, err := h.Install(ctx, installRequest(data))
	if !errors.Is(err, policy.ErrViolation) || ir == nil || ir.Status != "quarantined" || !strings.Contains(strings.Join(ir.Reasons, " "), `capabilities.channels[0] "payroll"`) {
		t.Fatalf("install: %v %+v", err, ir)
	}
}

// A webhook channel posts through the same egress firewall: to the
// configured URL (here the local server, allowed by the profile) and never
// to a private address the profile refuses.
func TestWebhookChannel(t *testing.T) {
	got := make(chan channels.Message, 1)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var m channels.Message
		if json.NewDecoder(r.Body).Decode(&m) == nil {
			got <- m
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ctx := context.Background()
	h := openHost(t, t.TempDir(), testProfile(t, srv.port, ""))
	hook, err := h.WebhookChannel(srv.url("api.example.com", "/hook"))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Channels().Register("ops.alerts", hook); err != nil {
		t.Fatal(err)
	}
	installArtifact(t, h, testskill.Build(t, fmt.Sprintf(notifyManifest, "ops.alerts"), notifyWasm, publisherKey))
	res, err := h.Call(ctx, host.CallRequest{SkillID: "acme.notify", ToolID: "acme.notify", Input: json.RawMessage(`{}`)})
	if err != nil || string(res.Output) != `{"delivered":true}` {
		t.Fatalf("%v %s", err, outputOf(res))
	}
	if m := <-got; m.Text != "disk 91% full" || m.SkillID != "acme.notify" {
		t.Fatalf("webhook got %+v", m)
	}
	// Private destinations are refused when the webhook is made, or at
	// delivery when a name resolves to one.
	if _, err := h.WebhookChannel("http://10.0.0.1:" + fmt.Sprint(srv.port) + "/"); err == nil {
		t.Fatal("a webhook to 10.0.0.1 was accepted")
	}
	bad, err := h.WebhookChannel(srv.url("metadata.example.com", "/"))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Channels().Register("leak", bad); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Channels().Send(ctx, channels.Message{Channel: "leak", Text: "x"}); !errors.Is(err, channels.ErrDelivery) || !strings.Contains(err.Error(), "private_address") && !strings.Contains(err.Error(), "non-public") {
		t.Fatalf("delivery to the metadata address: %v", err)
	}
}
