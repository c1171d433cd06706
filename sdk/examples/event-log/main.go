// Command event-log is a Palyra-Go skill meant to be bound to hooks: the
// daemon calls palyra.on_event with each skill event (a skill quarantined,
// enabled, ...), and the skill keeps the most recent ones in the storage
// capability (filesystem.write_roots = ["events"]), where palyra.recent reads
// them back, newest first. on_event returns 0, which a hook reads as
// "continue" (Palyra's hook decisions: 0 continue, 10 annotate, 20
// request_approval, 30 block; see host/hooks). Build it (from the
// repository root) with:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o event-log.wasm ./sdk/examples/event-log
//
// Like every example, this file has no wasip1 build constraint, so a
// native `go test` exercises the handlers through skill.DefaultMux exactly as
// init registers them (the SDK's entrypoint export exists only on wasip1).
//
// # Storage layout
//
// Under the grant "events": the key "seq" holds the last sequence number as
// decimal text, and each event is "e-" followed by its sequence number in
// seqDigits zero-padded digits, so that byte order is arrival order. Its
// value is the compact JSON of {hook_id, event, payload}. After each record
// the oldest entries past maxEntries are deleted. palyra.recent returns the
// stored values as they are, and at most maxRecentBytes of them.
//
// # Concurrency
//
// on_event is safe however many calls overlap (hook dispatch sends a skill
// its events one at a time, but the tool may also be called directly, or
// by "palyra hooks fire"): a call claims the next number by moving "seq"
// forward with compare-and-swap from the value it read (sdk/ABI.md §5.3),
// so two calls can never take the same number, and then writes its entry
// with compare-and-swap from "absent". A call that loses the counter's swap
// goes on from the value the winner left; a call that finds its entry's key
// taken (by an older version whose counter update failed) keeps that entry
// and claims the next number. No event overwrites another, and a number is
// left without an entry only when the call that claimed it failed to write
// it (and returned that error).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/palyra-go/palyra/sdk/go/skill"
)

const (
	// prefix is the storage grant, the write root declared in skill.toml.
	prefix = "events"
	// seqKey holds the sequence number of the last recorded event.
	seqKey = "seq"
	// entryPrefix starts the key of every stored event.
	entryPrefix = "e-"
	// seqDigits is how many digits a sequence number has in a key.
	seqDigits = 12
	// maxSeq is the largest sequence number seqDigits digits can hold.
	maxSeq = 999_999_999_999

	// maxEntries is how many events are kept; older ones are deleted.
	maxEntries = 100
	// maxPrunePerCall bounds the deletions of one on_event call (each is a
	// capability call, of the ABI's 256 per call).
	maxPrunePerCall = 50
	// defaultRecent is how many events palyra.recent returns by default.
	defaultRecent = 10
	// maxEntryBytes bounds one stored event.
	maxEntryBytes = 8 << 10
	// maxRecentBytes bounds the events one palyra.recent call returns: past
	// it the call stops, with fewer than limit events (and at least one).
	// Reading stored values is what costs a Go guest fuel, some 900 units a
	// byte all told (JSON and base64 in the storage responses): 64 KiB, in
	// 100 events or in 8, measured about 60 million, inside the budget of
	// 100 million in skill.toml.
	maxRecentBytes = 64 << 10
	// listPage is the page size of a storage list, the ABI's maximum.
	listPage = 1000
	// maxClaimAttempts bounds the numbers one on_event call tries before it
	// gives up (error "contended"): each attempt is one or two capability
	// calls, and with the prune they stay within the ABI's 256 per call.
	maxClaimAttempts = 60
)

// Event is the hook input of palyra.on_event, and one stored event.
type Event struct {
	// HookID is the id of the hook binding that fired.
	HookID string `json:"hook_id"`
	// Event is the event kind, e.g. "skill:quarantined".
	Event string `json:"event"`
	// Payload is the event's payload object, kept as sent.
	Payload json.RawMessage `json:"payload"`
}

// RecordedOut is the output of palyra.on_event.
type RecordedOut struct {
	// Recorded is the sequence number the event was stored under.
	Recorded int64 `json:"recorded"`
	// Event is the event kind recorded.
	Event string `json:"event"`
}

// RecentIn is the input of palyra.recent.
type RecentIn struct {
	// Limit is how many events to return, 1..maxEntries; defaultRecent when
	// absent.
	Limit *int `json:"limit"`
}

// RecentOut is the output of palyra.recent.
type RecentOut struct {
	// Events are stored events, each the JSON of an Event, newest first.
	Events []json.RawMessage `json:"events"`
}

func init() {
	skill.Handle("palyra.on_event", onEvent)
	skill.Handle("palyra.recent", recent)
}

// entryKey returns the storage key of event number seq.
func entryKey(seq int64) string {
	return fmt.Sprintf("%s%0*d", entryPrefix, seqDigits, seq)
}

// loadSeq returns the last sequence number (0 before the first event) and
// the stored bytes it was read from (nil before the first event), which a
// compare-and-swap of the counter expects.
func loadSeq(st *skill.Storage) (int64, []byte, error) {
	v, found, err := st.Get(seqKey)
	if err != nil || !found {
		return 0, nil, err
	}
	n, err := parseSeq(v)
	return n, v, err
}

// parseSeq reads a stored sequence number.
func parseSeq(v []byte) (int64, error) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < 0 {
		return 0, skill.Errorf("corrupt_counter", "key %q holds %q, not a sequence number", seqKey, v)
	}
	return n, nil
}

// claim stores entry under the next free sequence number, with
// compare-and-swap only, and returns the number. The number is claimed on
// the counter first: the call whose swap moves "seq" from n to n+1 owns n+1,
// and no other call can. The entry is then written from "absent", so an
// entry already under that number (a counter left behind by an older
// version of this skill) is kept and the next number tried. Claiming on the
// entry first would not do: prune deletes old entries, and a call holding a
// stale counter would find a pruned number "absent" and take it again.
func claim(st *skill.Storage, entry []byte) (int64, error) {
	seq, raw, err := loadSeq(st)
	if err != nil {
		return 0, err
	}
	for range maxClaimAttempts {
		if seq >= maxSeq {
			return 0, skill.Errorf("sequence_exhausted", "sequence number %d is the last of %d digits", seq, seqDigits)
		}
		next := seq + 1
		nextRaw := []byte(strconv.FormatInt(next, 10))
		moved, cur, err := st.CompareAndSwap(seqKey, raw, nextRaw)
		if err != nil {
			return 0, err
		}
		if !moved {
			// Another call took the number: go on from what it holds.
			if cur == nil {
				return 0, skill.Errorf("corrupt_counter", "key %q vanished while recording", seqKey)
			}
			if seq, err = parseSeq(cur); err != nil {
				return 0, err
			}
			raw = cur
			continue
		}
		took, _, err := st.CompareAndSwap(entryKey(next), nil, entry)
		if err != nil {
			return 0, err
		}
		if took {
			return next, nil
		}
		seq, raw = next, nextRaw
	}
	return 0, skill.Errorf("contended", "no free sequence number after %d attempts: other calls kept taking them", maxClaimAttempts)
}

// encodeEvent returns the compact JSON of ev, with no HTML escaping, so the
// payload is stored as sent.
func encodeEvent(ev Event) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func onEvent(ctx *skill.Context, in Event) (RecordedOut, error) {
	// The supervisor has validated the input against the schema; these
	// checks matter to callers that skip it (native tests).
	if strings.TrimSpace(in.HookID) == "" || strings.TrimSpace(in.Event) == "" {
		return RecordedOut{}, skill.NewError("invalid_event", "hook_id and event must be non-empty")
	}
	if p := bytes.TrimSpace(in.Payload); len(p) == 0 || p[0] != '{' {
		return RecordedOut{}, skill.NewError("invalid_event", "payload must be a JSON object")
	}
	entry, err := encodeEvent(in)
	if err != nil {
		return RecordedOut{}, skill.Errorf("invalid_event", "encode event: %w", err)
	}
	if len(entry) > maxEntryBytes {
		return RecordedOut{}, skill.Errorf("event_too_large", "event of %s is %d bytes, over the limit of %d bytes", in.Event, len(entry), maxEntryBytes)
	}

	st := ctx.Storage(prefix)
	seq, err := claim(st, entry)
	if err != nil {
		return RecordedOut{}, err
	}
	if err := prune(st); err != nil {
		return RecordedOut{}, err
	}
	ctx.Logf(skill.LevelDebug, "recorded %s from hook %s as %d", in.Event, in.HookID, seq)
	return RecordedOut{Recorded: seq, Event: in.Event}, nil
}

// prune deletes the oldest entries past maxEntries, at most maxPrunePerCall
// of them: it lists the oldest maxEntries+maxPrunePerCall keys, and every key
// but the newest maxEntries of those has at least maxEntries newer ones.
func prune(st *skill.Storage) error {
	keys, _, err := st.List(entryPrefix, maxEntries+maxPrunePerCall, "")
	if err != nil {
		return err
	}
	for i := 0; i < len(keys)-maxEntries; i++ {
		if _, err := st.Delete(keys[i]); err != nil {
			return err
		}
	}
	return nil
}

func recent(ctx *skill.Context, in RecentIn) (RecentOut, error) {
	limit := defaultRecent
	if in.Limit != nil {
		limit = *in.Limit
	}
	if limit < 1 || limit > maxEntries {
		return RecentOut{}, skill.Errorf("invalid_limit", "limit %d is outside 1..%d", limit, maxEntries)
	}
	st := ctx.Storage(prefix)

	// The newest limit keys: the tail of the listing, page by page.
	var window []string
	cursor := ""
	for {
		keys, next, err := st.List(entryPrefix, listPage, cursor)
		if err != nil {
			return RecentOut{}, err
		}
		window = append(window, keys...)
		if len(window) > limit {
			window = append(window[:0:0], window[len(window)-limit:]...)
		}
		if next == "" {
			break
		}
		if next <= cursor {
			return RecentOut{}, skill.Errorf("storage_error", "list cursor went from %q back to %q", cursor, next)
		}
		cursor = next
	}

	// Each entry is already the compact JSON of one output item: it goes
	// out as stored, and encoding the output checks that it is JSON.
	out := RecentOut{Events: make([]json.RawMessage, 0, len(window))}
	size := 0
	for i := len(window) - 1; i >= 0; i-- {
		v, found, err := st.Get(window[i])
		if err != nil {
			return RecentOut{}, err
		}
		if !found {
			continue // pruned since the listing
		}
		if size += len(v); size > maxRecentBytes && len(out.Events) > 0 {
			break
		}
		out.Events = append(out.Events, v)
	}
	return out, nil
}

func main() {}
