package wasmrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzInputDocument: the input document appendInputDocument writes is
// byte for byte the one json.Marshal writes (buildInputDocument), for any
// ids, valid input and grants, escapes and all; input that is not JSON
// fails both, and appendInputDocument says so with ErrInvalidInput.
func FuzzInputDocument(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add("inv-1", "acme.echo", "acme.echo", []byte(s), "api.example.com\n*.example.org")
	}
	f.Add("a<b", "s&k", `t"\`, []byte(`{"html":"<b>&amp;</b>"}`), "")
	f.Add("é", "\x7f", "\u2028", []byte(`["\u2028",  1 , {"a" : null}]`), "x\n<y>\n&")
	f.Add("", "", "", []byte(" \n\t{ } "), "\xff\n \n")
	f.Fuzz(func(t *testing.T, id, skill, tool string, input []byte, grants string) {
		list := strings.Split(grants, "\n")
		inv := &Invocation{ID: id, SkillID: skill, ToolID: tool, Input: input,
			Grants: Grants{HTTPHosts: list, SecretKeys: list[:len(list)/2], Channels: list[len(list)/2:]}}
		lists, err := canonicalGrants(inv.Grants)
		if err != nil {
			return
		}
		deadline := time.UnixMilli(1_760_000_000_123)
		want, wantErr := buildInputDocument(inv, &lists, deadline)
		m := &Module{}
		g, err := m.grantsFor(inv.Grants)
		if err != nil {
			t.Fatalf("grantsFor: %v", err)
		}
		prefix := []byte("prefix")
		got, gotErr := appendInputDocument(bytes.Clone(prefix), inv, g, deadline)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("errors differ: json.Marshal %v, append %v", wantErr, gotErr)
		}
		if gotErr != nil && (!errors.Is(gotErr, ErrInvalidInput) || len(input) == 0 || json.Valid(input)) {
			t.Fatalf("append refused input %q: %v", input, gotErr)
		}
		if !bytes.HasPrefix(got, prefix) {
			t.Fatalf("dst not kept: %q", got)
		}
		if wantErr == nil && !bytes.Equal(got[len(prefix):], want) {
			t.Fatalf("documents differ:\nappend:       %s\njson.Marshal: %s", got[len(prefix):], want)
		}
	})
}

// TestGrantsFor: the canonical grants are made again only when a call's
// grants differ from the last call's, and the cache keeps its own copy, so
// that a caller changing its slices afterwards is seen as new grants.
func TestGrantsFor(t *testing.T) {
	m := &Module{}
	hosts := []string{"b.example", "a.example"}
	g1, err := m.grantsFor(Grants{HTTPHosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(g1.lists[kindHTTP], ","); got != "a.example,b.example" {
		t.Fatalf("canonical hosts %q", got)
	}
	if !strings.Contains(string(g1.json), `{"handle":10000,"host":"a.example"}`) {
		t.Fatalf("grants JSON %s", g1.json)
	}
	g2, _ := m.grantsFor(Grants{HTTPHosts: []string{"b.example", "a.example"}})
	if g2 != g1 {
		t.Fatal("equal grants were canonicalized again")
	}
	hosts[0] = "c.example" // the caller reuses its slice
	g3, _ := m.grantsFor(Grants{HTTPHosts: hosts})
	if g3 == g1 || strings.Join(g3.lists[kindHTTP], ",") != "a.example,c.example" {
		t.Fatalf("changed grants served from the cache: %q", g3.lists[kindHTTP])
	}
	if strings.Join(g1.lists[kindHTTP], ",") != "a.example,b.example" {
		t.Fatal("the earlier call's lists changed")
	}
	many := make([]string, maxGrantsPerKind+1)
	for i := range many {
		many[i] = strings.Repeat("x", i+1)
	}
	if _, err := m.grantsFor(Grants{Channels: many}); err == nil {
		t.Fatal("grants over the limit accepted")
	}
	if g, err := m.grantsFor(Grants{HTTPHosts: hosts}); err != nil || g != g3 {
		t.Fatalf("after a refused call: %v, cached %v", err, g == g3)
	}
}

// BenchmarkInputDocument: the input document of a call, as json.Marshal
// made it with grants canonicalized at every call (before), and as calls
// make it now (after).
//
//	go test ./sidecar/internal/wasmrt -run '^$' -bench InputDocument -count 5
func BenchmarkInputDocument(b *testing.B) {
	inv := &Invocation{ID: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", SkillID: "bench.trivial", ToolID: "bench.trivial",
		Input: []byte(`{"text":"hello"}`), Grants: Grants{HTTPHosts: []string{"api.example.com"}, SecretKeys: []string{"token"}}}
	deadline := time.Now().Add(30 * time.Second)
	b.Run("before", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			lists, err := canonicalGrants(inv.Grants)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := buildInputDocument(inv, &lists, deadline); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("after", func(b *testing.B) {
		m := &Module{}
		b.ReportAllocs()
		for b.Loop() {
			g, err := m.grantsFor(inv.Grants)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := appendInputDocument(nil, inv, g, deadline); err != nil {
				b.Fatal(err)
			}
		}
	})
}
