package inventory

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestSkillConfigRoundTrip: ChangeConfig upserts and deletes values per
// skill, SkillConfig reads them back in key order with principal and time,
// the change is journaled with the keys only (sensitive ones included via
// JournalSet), and invalid JSON or a missing principal is refused.
func TestSkillConfigRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	change := func(ch ConfigChange) error {
		return db.Update(ctx, func(tx *Tx) error { return tx.ChangeConfig(ch) })
	}
	if err := change(ConfigChange{SkillID: "Acme.Echo", Principal: "alice", JournalSet: []string{"api_token"},
		Set: []ConfigValue{{Key: "retries", Value: json.RawMessage(`3`)}, {Key: "endpoint", Value: json.RawMessage(`"https://e"`)}}}); err != nil {
		t.Fatal(err)
	}
	got, err := db.SkillConfig(ctx, "acme.echo")
	if err != nil || len(got) != 2 || got[0].Key != "endpoint" || string(got[0].Value) != `"https://e"` ||
		got[1].Key != "retries" || string(got[1].Value) != "3" || got[0].Principal != "alice" || got[0].UpdatedAt.IsZero() {
		t.Fatalf("SkillConfig = %+v, %v", got, err)
	}
	if err := change(ConfigChange{SkillID: "acme.echo", Principal: "bob", Set: []ConfigValue{{Key: "retries", Value: json.RawMessage(`5`)}}, Unset: []string{"endpoint"}}); err != nil {
		t.Fatal(err)
	}
	got, _ = db.SkillConfig(ctx, "acme.echo")
	if len(got) != 1 || string(got[0].Value) != "5" || got[0].Principal != "bob" {
		t.Fatalf("after the second change: %+v", got)
	}
	if other, _ := db.SkillConfig(ctx, "acme.other"); len(other) != 0 {
		t.Fatalf("another skill sees %+v", other)
	}
	evs, err := db.Events(ctx, EventFilter{SkillID: "acme.echo"})
	if err != nil || len(evs) != 2 || evs[0].Kind != EventConfigChanged || evs[0].Principal != "alice" ||
		string(evs[0].Details) != `{"set":["api_token","endpoint","retries"]}` || string(evs[1].Details) != `{"set":["retries"],"unset":["endpoint"]}` {
		t.Fatalf("journal: %+v, %v", evs, err)
	}
	for _, ev := range evs {
		if strings.Contains(string(ev.Details), "https://e") {
			t.Fatal("the journal holds a value")
		}
	}
	for name, ch := range map[string]ConfigChange{
		"bad json":     {SkillID: "acme.echo", Principal: "a", Set: []ConfigValue{{Key: "k", Value: json.RawMessage(`{`)}}},
		"no principal": {SkillID: "acme.echo", Set: []ConfigValue{{Key: "k", Value: json.RawMessage(`1`)}}},
		"bad skill id": {SkillID: "Acme Echo", Principal: "a", Set: []ConfigValue{{Key: "k", Value: json.RawMessage(`1`)}}},
		"empty value":  {SkillID: "acme.echo", Principal: "a", Set: []ConfigValue{{Key: "k"}}},
	} {
		if err := change(ch); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	// Nothing named: nothing journaled.
	if err := change(ConfigChange{SkillID: "acme.echo", Principal: "a"}); err != nil {
		t.Fatal(err)
	}
	if evs2, _ := db.Events(ctx, EventFilter{SkillID: "acme.echo"}); len(evs2) != 2 {
		t.Fatalf("an empty change was journaled: %d events", len(evs2))
	}
}
