package mcpserver_test

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/host/mcpserver"
)

func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}

func TestNames(t *testing.T) {
	long := "acme." + strings.Repeat("x", 70)
	cases := []struct {
		name string
		refs []mcpserver.ToolRef
		want map[mcpserver.ToolRef]string
	}{
		{
			name: "dots become underscores",
			refs: []mcpserver.ToolRef{{"palyra.echo", "palyra.echo"}, {"acme.kit", "acme.kit.search-v2"}},
			want: map[mcpserver.ToolRef]string{
				{"palyra.echo", "palyra.echo"}:     "palyra_echo",
				{"acme.kit", "acme.kit.search-v2"}: "acme_kit_search-v2",
			},
		},
		{
			name: "same tool id in two skills: the later skill id gets the hash",
			refs: []mcpserver.ToolRef{{"b.skill", "acme.echo"}, {"a.skill", "acme.echo"}},
			want: map[mcpserver.ToolRef]string{
				{"a.skill", "acme.echo"}: "acme_echo",
				{"b.skill", "acme.echo"}: "acme_echo_" + hash8("b.skill/acme.echo"),
			},
		},
		{
			name: "two ids with the same base name: the later tool id gets the hash",
			refs: []mcpserver.ToolRef{{"s", "acme_echo"}, {"s", "acme.echo"}},
			want: map[mcpserver.ToolRef]string{
				{"s", "acme.echo"}: "acme_echo",
				{"s", "acme_echo"}: "acme_echo_" + hash8("s/acme_echo"),
			},
		},
		{
			name: "an id longer than 64 is cut to 55 and hashed",
			refs: []mcpserver.ToolRef{{"acme.long", long}},
			want: map[mcpserver.ToolRef]string{
				{"acme.long", long}: strings.ReplaceAll(long, ".", "_")[:55] + "_" + hash8("acme.long/"+long),
			},
		},
		{
			name: "invalid characters and an empty id",
			refs: []mcpserver.ToolRef{{"x", "acme.é/tool name:1"}, {"x", ""}},
			want: map[mcpserver.ToolRef]string{
				{"x", "acme.é/tool name:1"}: "acme___tool_name_1",
				{"x", ""}:                   "tool",
			},
		},
		{
			name: "a plain name that looks like a hashed one keeps it; the hashed one moves on",
			refs: []mcpserver.ToolRef{{"a", "t"}, {"b", "t"}, {"c", "t_" + hash8("b/t")}},
			want: map[mcpserver.ToolRef]string{
				{"a", "t"}:                 "t",
				{"c", "t_" + hash8("b/t")}: "t_" + hash8("b/t"),
				{"b", "t"}:                 "t_" + hash8("b/t#1"),
			},
		},
		{
			name: "duplicates count once",
			refs: []mcpserver.ToolRef{{"a", "t"}, {"a", "t"}},
			want: map[mcpserver.ToolRef]string{{"a", "t"}: "t"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mcpserver.Names(c.refs)
			if len(got) != len(c.want) {
				t.Fatalf("got %d names %v, want %d", len(got), got, len(c.want))
			}
			for r, w := range c.want {
				if got[r] != w {
					t.Errorf("%v: got %q, want %q", r, got[r], w)
				}
				if !mcpserver.ValidName(got[r]) {
					t.Errorf("%v: %q is not a valid name", r, got[r])
				}
			}
		})
	}
}

// TestNamesDeterministic: the same set in any order gives the same names,
// all valid and distinct.
func TestNamesDeterministic(t *testing.T) {
	refs := []mcpserver.ToolRef{
		{"acme.a", "acme.echo"}, {"acme.b", "acme.echo"}, {"acme.c", "acme_echo"}, {"acme.c", "acme.echo"},
		{"acme.d", "acme." + strings.Repeat("y", 80)}, {"acme.e", "acme." + strings.Repeat("y", 80)},
		{"acme.f", "x"}, {"acme.g", "x_" + hash8("acme.h/x")}, {"acme.h", "x"},
	}
	first := mcpserver.Names(refs)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50; i++ {
		perm := slices.Clone(refs)
		rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		got := mcpserver.Names(perm)
		for r, n := range first {
			if got[r] != n {
				t.Fatalf("order %v: %v got %q, first order gave %q", perm, r, got[r], n)
			}
		}
	}
	seen := map[string]mcpserver.ToolRef{}
	for r, n := range first {
		if !mcpserver.ValidName(n) {
			t.Errorf("%v: invalid name %q", r, n)
		}
		if o, dup := seen[n]; dup {
			t.Errorf("%v and %v share %q", r, o, n)
		}
		seen[n] = r
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "palyra_echo": true, "A-b_9": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "a.b": false, "a b": false, "é": false,
	} {
		if got := mcpserver.ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %t, want %t", name, got, want)
		}
	}
}

// FuzzNames: whatever the tool ids (they come from signed but third-party
// manifests), the names are valid, distinct and order-independent.
func FuzzNames(f *testing.F) {
	f.Add("acme.echo", "acme_echo", "acme.a", "acme.b")
	f.Add("", "tool", "x", "x")
	f.Add(strings.Repeat("é", 70), "t_12345678", "s", "s")
	f.Fuzz(func(t *testing.T, id1, id2, s1, s2 string) {
		refs := []mcpserver.ToolRef{{s1, id1}, {s2, id2}, {s1, id2}, {s2, id1}}
		a := mcpserver.Names(refs)
		b := mcpserver.Names([]mcpserver.ToolRef{refs[3], refs[1], refs[2], refs[0]})
		seen := map[string]bool{}
		for r, n := range a {
			if !mcpserver.ValidName(n) {
				t.Fatalf("%v: invalid name %q", r, n)
			}
			if b[r] != n {
				t.Fatalf("%v: %q in one order, %q in another", r, n, b[r])
			}
			if seen[n] {
				t.Fatalf("name %q given twice", n)
			}
			seen[n] = true
		}
	})
}
