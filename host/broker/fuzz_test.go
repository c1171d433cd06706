package broker_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/broker"
	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/storage"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// FuzzCall feeds guest request documents (untrusted JSON) to every kind:
// the broker never panics and only ever refuses with a CapabilityError.
func FuzzCall(f *testing.F) {
	for _, s := range []string{`{"op":"get","key":"k"}`, `{"op":"put","key":"a/b","value_base64":"eA=="}`,
		`{"op":"list","prefix":"a","limit":5,"cursor":"a"}`, `{"op":"describe"}`, `{"op":"send","text":"hi"}`,
		`{"op":"cas","key":"k","expected_base64":"eA==","value_base64":"eQ=="}`, `{"op":"cas","key":"k","expected_base64":null,"value_base64":""}`,
		`{"url":"http://127.0.0.1:1/","secret_headers":[{"name":"x","secret_handle":20000}]}`, `[]`, `{"op":null}`} {
		for k := range 4 {
			f.Add(s, uint8(k))
		}
	}
	st, err := storage.Open(context.Background(), filepath.Join(f.TempDir(), "s.db"))
	if err != nil {
		f.Fatal(err)
	}
	defer st.Close()
	br := broker.New(broker.Config{Storage: st, Secrets: secrets{}, Channels: channels.NewRegistry()})
	end := br.Begin(broker.Invocation{ID: "i", SkillID: "acme.x", Grants: policy.Grants{
		HTTPHosts: []string{"h.example"}, SecretKeys: []string{"global/k"}, StoragePrefixes: []string{"c"}, Channels: []string{"ch"},
	}, Limits: policy.Limits{MaxStorageKeys: 10, MaxStorageBytes: 4096}})
	defer end()
	kinds := []struct {
		k      sidecarplugin.CapabilityKind
		handle int32
		grant  string
	}{{"http", 10000, "h.example"}, {"secret", 20000, "global/k"}, {"storage", 30000, "c"}, {"channel", 40000, "ch"}}
	f.Fuzz(func(t *testing.T, doc string, which uint8) {
		k := kinds[int(which)%len(kinds)]
		_, err := br.Call(context.Background(), sidecarplugin.CapabilityRequest{InvocationID: "i", SkillID: "acme.x", Kind: k.k, Handle: k.handle, Grant: k.grant, Request: []byte(doc)})
		var ce *sidecarplugin.CapabilityError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("error %T %v", err, err)
		}
	})
}
