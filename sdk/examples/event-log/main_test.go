package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/palyra-go/palyra/sdk/go/skill"
	"github.com/palyra-go/palyra/sdk/go/skill/skilltest"
)

// call runs one tool of this skill, as registered in init, with the events
// grant over st.
func call(st *skilltest.MemoryStorage, tool string, input any) *skilltest.Result {
	return skilltest.Run(skill.DefaultMux, skilltest.Call{
		ToolID:  tool,
		SkillID: "palyra.event_log",
		Input:   input,
		Grants:  skilltest.Grants{Storage: []string{prefix}},
		Backend: st,
	})
}

// record calls palyra.on_event and fails t unless it succeeds.
func record(t testing.TB, st *skilltest.MemoryStorage, input string) RecordedOut {
	t.Helper()
	res := call(st, "palyra.on_event", json.RawMessage(input))
	if res.Status != 0 {
		t.Fatalf("on_event %s: status %d %s: %s", input, res.Status, res.ErrorCode(), res.ErrorMessage())
	}
	var out RecordedOut
	if err := res.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// recentEvents calls palyra.recent and fails t unless it succeeds.
func recentEvents(t testing.TB, st *skilltest.MemoryStorage, input string) []Event {
	t.Helper()
	res := call(st, "palyra.recent", json.RawMessage(input))
	if res.Status != 0 {
		t.Fatalf("recent %s: status %d %s: %s", input, res.Status, res.ErrorCode(), res.ErrorMessage())
	}
	var out struct{ Events []Event }
	if err := res.Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Events == nil {
		t.Fatalf("recent %s: events is null, want an array: %s", input, res.Output)
	}
	return out.Events
}

// put stores value under key of the events grant, through the storage
// capability, as another call of the skill would.
func put(t *testing.T, st *skilltest.MemoryStorage, key, value string) {
	t.Helper()
	mux := skill.NewMux()
	mux.Handle("test.put", func(ctx *skill.Context, _ json.RawMessage) (json.RawMessage, error) {
		return nil, ctx.Storage(prefix).Put(key, []byte(value))
	})
	if res := skilltest.Run(mux, skilltest.Call{ToolID: "test.put", Grants: skilltest.Grants{Storage: []string{prefix}}, Backend: st}); res.Status != 0 {
		t.Fatalf("put %s: %s", key, res.Output)
	}
}

func hookInput(hook, kind string, id int) string {
	return fmt.Sprintf(`{"hook_id":%q,"event":%q,"payload":{"id":%d,"kind":%q,"skill_id":"acme.x","details":{"n":%d}}}`, hook, kind, id, kind, id)
}

func TestRecordAndRecent(t *testing.T) {
	st := skilltest.NewMemoryStorage()
	if got := recentEvents(t, st, `{}`); len(got) != 0 {
		t.Fatalf("recent on an empty log: %+v", got)
	}
	kinds := []string{"skill:quarantined", "skill:enabled", "skill:disabled"}
	for i := 1; i <= 12; i++ {
		kind := kinds[i%len(kinds)]
		out := record(t, st, hookInput("audit.log", kind, i))
		if out != (RecordedOut{Recorded: int64(i), Event: kind}) {
			t.Fatalf("event %d: output %+v", i, out)
		}
	}
	if v, _ := st.Value(prefix, seqKey); string(v) != "12" {
		t.Errorf("seq = %q, want 12", v)
	}
	want := `{"hook_id":"audit.log","event":"skill:quarantined","payload":{"id":3,"kind":"skill:quarantined","skill_id":"acme.x","details":{"n":3}}}`
	if v, ok := st.Value(prefix, "e-000000000003"); !ok || string(v) != want {
		t.Errorf("e-000000000003 = %s, %v; want %s", v, ok, want)
	}

	tests := []struct {
		input   string
		wantIDs []int
	}{
		{`{}`, []int{12, 11, 10, 9, 8, 7, 6, 5, 4, 3}},
		{`{"limit":1}`, []int{12}},
		{`{"limit":3}`, []int{12, 11, 10}},
		{`{"limit":100}`, []int{12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.input, func(t *testing.T) {
			got := recentEvents(t, st, tc.input)
			var ids []int
			for _, ev := range got {
				var p struct {
					ID   int    `json:"id"`
					Kind string `json:"kind"`
				}
				if err := json.Unmarshal(ev.Payload, &p); err != nil {
					t.Fatal(err)
				}
				if ev.HookID != "audit.log" || ev.Event != p.Kind || ev.Event != kinds[p.ID%len(kinds)] {
					t.Errorf("event %+v", ev)
				}
				ids = append(ids, p.ID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tc.wantIDs) {
				t.Errorf("ids %v, want %v", ids, tc.wantIDs)
			}
		})
	}
}

// TestPayloadKeptAsSent: the payload comes back as the same JSON value,
// with unlisted fields, nested values and non-ASCII text, and in the compact
// form it was stored in.
func TestPayloadKeptAsSent(t *testing.T) {
	st := skilltest.NewMemoryStorage()
	payload := `{ "kind": "skill:quarantined", "reason": "<script> & \"quotes\" — é",
		"future_field": [1, 2.5, null, true], "details": {"nested": {"a": []}}, "at": "2025-01-02T03:04:05Z" }`
	record(t, st, `{"hook_id":"h1","event":"skill:quarantined","payload":`+payload+`}`)
	got := recentEvents(t, st, `{"limit":1}`)
	if len(got) != 1 {
		t.Fatalf("recent returned %d events", len(got))
	}
	var a, b any
	if err := json.Unmarshal(got[0].Payload, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(payload), &b); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("payload %s, want the value of %s", got[0].Payload, payload)
	}
	stored, _ := st.Value(prefix, "e-000000000001")
	var entry struct{ Payload json.RawMessage }
	if err := json.Unmarshal(stored, &entry); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, entry.Payload); err != nil {
		t.Fatal(err)
	}
	if compact.String() != string(entry.Payload) || !bytes.Equal(got[0].Payload, entry.Payload) {
		t.Errorf("stored payload %s is not compact, or recent returned %s", entry.Payload, got[0].Payload)
	}
	if !bytes.Contains(stored, []byte("— é")) {
		t.Errorf("stored %s: non-ASCII text escaped", stored)
	}
}

// TestKeepsNewest100: past maxEntries events the oldest are deleted, and
// recent returns the newest 100.
func TestKeepsNewest100(t *testing.T) {
	st := skilltest.NewMemoryStorage()
	const n = 130
	for i := 1; i <= n; i++ {
		record(t, st, hookInput("h", "skill:enabled", i))
	}
	for i := 1; i <= n; i++ {
		_, ok := st.Value(prefix, entryKey(int64(i)))
		if want := i > n-maxEntries; ok != want {
			t.Errorf("entry %d present %v, want %v", i, ok, want)
		}
	}
	got := recentEvents(t, st, `{"limit":100}`)
	if len(got) != maxEntries {
		t.Fatalf("recent returned %d events, want %d", len(got), maxEntries)
	}
	for i, ev := range got {
		var p struct{ ID int }
		if err := json.Unmarshal(ev.Payload, &p); err != nil || p.ID != n-i {
			t.Fatalf("events[%d] has id %d (%v), want %d", i, p.ID, err, n-i)
		}
	}
}

// TestRecentByteBudget: recent stops before the event that would take its
// answer past maxRecentBytes, but always returns one.
func TestRecentByteBudget(t *testing.T) {
	st := skilltest.NewMemoryStorage()
	pad := strings.Repeat("p", maxEntryBytes-100)
	const n = 20
	for i := 1; i <= n; i++ {
		record(t, st, fmt.Sprintf(`{"hook_id":"h","event":"e","payload":{"id":%d,"pad":%q}}`, i, pad))
	}
	entry, _ := st.Value(prefix, entryKey(1))
	want := maxRecentBytes / len(entry)
	got := recentEvents(t, st, `{"limit":100}`)
	if len(got) != want || want >= n {
		t.Fatalf("recent returned %d events of %d bytes, want %d", len(got), len(entry), want)
	}
	var p struct{ ID int }
	if err := json.Unmarshal(got[0].Payload, &p); err != nil || p.ID != n {
		t.Fatalf("first event %d (%v), want %d", p.ID, err, n)
	}

	// One event over the budget on its own still comes back.
	st = skilltest.NewMemoryStorage()
	put(t, st, entryKey(1), `{"hook_id":"h","event":"e","payload":{"pad":"`+strings.Repeat("q", maxRecentBytes)+`"}}`)
	if got := recentEvents(t, st, `{}`); len(got) != 1 {
		t.Fatalf("recent returned %d events, want the one", len(got))
	}
}

// TestPruneCatchesUp: a log left with more than maxEntries entries (say, by
// failed deletions) shrinks by at most maxPrunePerCall per event back to
// maxEntries.
func TestPruneCatchesUp(t *testing.T) {
	st := skilltest.NewMemoryStorage()
	const left = 180
	for i := 1; i <= left; i++ {
		put(t, st, entryKey(int64(i)), fmt.Sprintf(`{"hook_id":"h","event":"e","payload":{"id":%d}}`, i))
	}
	put(t, st, seqKey, fmt.Sprint(left))
	count := func() int {
		c := 0
		for i := 1; i <= left+3; i++ {
			if _, ok := st.Value(prefix, entryKey(int64(i))); ok {
				c++
			}
		}
		return c
	}
	for _, want := range []int{left + 1 - maxPrunePerCall, maxEntries, maxEntries} {
		record(t, st, hookInput("h", "skill:enabled", 0))
		if got := count(); got != want {
			t.Fatalf("%d entries, want %d", got, want)
		}
	}
	if _, ok := st.Value(prefix, entryKey(left+3)); !ok {
		t.Fatal("the newest entry was deleted")
	}
}

// TestConcurrentRecords: calls that overlap each take their own sequence
// number (compare-and-swap), none is skipped or overwritten, and each
// stored entry is the event of the call that was given its number.
func TestConcurrentRecords(t *testing.T) {
	st := skilltest.NewMemoryStorage()
	const goroutines, each = 8, 25
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got = map[int64]int{} // sequence number → event id
	)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := g*each + i + 1
				res := call(st, "palyra.on_event", json.RawMessage(hookInput("h", "skill:enabled", id)))
				var out RecordedOut
				if res.Status != 0 || res.Decode(&out) != nil {
					t.Errorf("event %d: status %d %s: %s", id, res.Status, res.ErrorCode(), res.ErrorMessage())
					return
				}
				mu.Lock()
				if prev, dup := got[out.Recorded]; dup {
					t.Errorf("events %d and %d both recorded as %d", prev, id, out.Recorded)
				}
				got[out.Recorded] = id
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	const n = goroutines * each
	for seq := int64(1); seq <= n; seq++ {
		if _, ok := got[seq]; !ok {
			t.Fatalf("no event recorded as %d", seq)
		}
	}
	if v, _ := st.Value(prefix, seqKey); string(v) != fmt.Sprint(n) {
		t.Errorf("seq = %q, want %d", v, n)
	}
	for seq := int64(n - maxEntries + 1); seq <= n; seq++ {
		v, ok := st.Value(prefix, entryKey(seq))
		var e struct{ Payload struct{ ID int } }
		if !ok || json.Unmarshal(v, &e) != nil || e.Payload.ID != got[seq] {
			t.Errorf("entry %d = %s, want event %d", seq, v, got[seq])
		}
	}
}

// TestClaimHelpsALaggingCounter: an entry written under the next number by
// a call that failed before moving the counter is neither overwritten nor
// left behind the counter: the next call moves the counter past it and
// takes the number after.
func TestClaimHelpsALaggingCounter(t *testing.T) {
	st := skilltest.NewMemoryStorage()
	record(t, st, hookInput("h", "skill:enabled", 1))
	put(t, st, entryKey(2), `{"hook_id":"h","event":"e","payload":{"id":2}}`) // counter still 1
	if out := record(t, st, hookInput("h", "skill:enabled", 3)); out.Recorded != 3 {
		t.Fatalf("recorded as %d, want 3", out.Recorded)
	}
	if v, _ := st.Value(prefix, entryKey(2)); !strings.Contains(string(v), `"id":2`) {
		t.Errorf("entry 2 overwritten: %s", v)
	}
	if v, _ := st.Value(prefix, seqKey); string(v) != "3" {
		t.Errorf("seq = %q, want 3", v)
	}
}

func TestErrors(t *testing.T) {
	big := strings.Repeat("x", maxEntryBytes)
	tests := []struct {
		name     string
		setup    map[string]string // key → value stored first
		tool     string
		input    string
		wantCode string
	}{
		{"empty hook_id", nil, "palyra.on_event", `{"hook_id":"","event":"skill:enabled","payload":{}}`, "invalid_event"},
		{"blank event", nil, "palyra.on_event", `{"hook_id":"h","event":" ","payload":{}}`, "invalid_event"},
		{"no payload", nil, "palyra.on_event", `{"hook_id":"h","event":"e"}`, "invalid_event"},
		{"payload null", nil, "palyra.on_event", `{"hook_id":"h","event":"e","payload":null}`, "invalid_event"},
		{"payload array", nil, "palyra.on_event", `{"hook_id":"h","event":"e","payload":[1]}`, "invalid_event"},
		{"not an object", nil, "palyra.on_event", `"hi"`, skill.CodeInvalidInput},
		{"too large", nil, "palyra.on_event", `{"hook_id":"h","event":"e","payload":{"reason":"` + big + `"}}`, "event_too_large"},
		{"corrupt seq", map[string]string{seqKey: "twelve"}, "palyra.on_event", hookInput("h", "e", 1), "corrupt_counter"},
		{"negative seq", map[string]string{seqKey: "-4"}, "palyra.on_event", hookInput("h", "e", 1), "corrupt_counter"},
		{"seq exhausted", map[string]string{seqKey: fmt.Sprint(maxSeq)}, "palyra.on_event", hookInput("h", "e", 1), "sequence_exhausted"},
		{"limit 0", nil, "palyra.recent", `{"limit":0}`, "invalid_limit"},
		{"limit 101", nil, "palyra.recent", `{"limit":101}`, "invalid_limit"},
		{"corrupt entry", map[string]string{"e-000000000001": "{"}, "palyra.recent", `{}`, skill.CodeInvalidOutput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := skilltest.NewMemoryStorage()
			for k, v := range tc.setup {
				put(t, st, k, v)
			}
			res := call(st, tc.tool, json.RawMessage(tc.input))
			if res.Status == 0 || res.ErrorCode() != tc.wantCode {
				t.Fatalf("status %d code %q (%s), want code %q", res.Status, res.ErrorCode(), res.ErrorMessage(), tc.wantCode)
			}
			if tc.tool == "palyra.on_event" && tc.setup == nil {
				if _, ok := st.Value(prefix, seqKey); ok {
					t.Error("a refused event moved the counter")
				}
			}
		})
	}
}

// TestNoGrant: without the events grant both tools report the capability
// failure rather than pretending to work.
func TestNoGrant(t *testing.T) {
	for _, tc := range []struct{ tool, input string }{
		{"palyra.on_event", hookInput("h", "e", 1)},
		{"palyra.recent", `{}`},
	} {
		res := skilltest.Run(skill.DefaultMux, skilltest.Call{ToolID: tc.tool, Input: json.RawMessage(tc.input), Backend: skilltest.NewMemoryStorage()})
		if res.Status == 0 || res.ErrorCode() != "capability_not_granted" {
			t.Errorf("%s: status %d code %q", tc.tool, res.Status, res.ErrorCode())
		}
	}
}

// TestRegistered: init registers exactly the tools of skill.toml.
func TestRegistered(t *testing.T) {
	if got := fmt.Sprint(skill.DefaultMux.ToolIDs()); got != "[palyra.on_event palyra.recent]" {
		t.Fatalf("tools %s", got)
	}
}

// FuzzOnEvent feeds arbitrary tool inputs to palyra.on_event: it either
// refuses them with one of its codes, or records them so that recent gives
// back the same hook_id, event and (compacted) payload.
func FuzzOnEvent(f *testing.F) {
	f.Add([]byte(hookInput("audit.log", "skill:quarantined", 1)))
	f.Add([]byte(`{"hook_id":"h","event":"e","payload":{"a":"<&>","b":[{}]}}`))
	f.Add([]byte(`{"hook_id":"h","event":"e","payload":null}`))
	f.Add([]byte(`{"hook_id":1}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"hook_id":"h","event":"e","payload":{"x":"\ud800"}}`))
	f.Fuzz(func(t *testing.T, input []byte) {
		if !json.Valid(input) {
			return // the runtime refuses input that is not JSON before the guest runs
		}
		st := skilltest.NewMemoryStorage()
		res := call(st, "palyra.on_event", json.RawMessage(input))
		if res.Status != 0 {
			switch res.ErrorCode() {
			case "invalid_event", "event_too_large", skill.CodeInvalidInput:
			default:
				t.Fatalf("code %q: %s", res.ErrorCode(), res.ErrorMessage())
			}
			return
		}
		var in Event
		if err := json.Unmarshal(input, &in); err != nil {
			t.Fatal(err)
		}
		got := recentEvents(t, st, `{}`)
		var want bytes.Buffer
		if err := json.Compact(&want, in.Payload); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].HookID != in.HookID || got[0].Event != in.Event {
			t.Fatalf("recent %+v after %s", got, input)
		}
		// encoding/json replaces invalid UTF-8 and lone surrogates in the
		// payload's strings, so compare the decoded values.
		var a, b any
		if json.Unmarshal(got[0].Payload, &a) != nil || json.Unmarshal(want.Bytes(), &b) != nil || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("payload %s, want %s", got[0].Payload, want.Bytes())
		}
	})
}
