package wasmrt

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// The host-side parsers of guest-supplied JSON, fuzzed directly. Each must
// never panic, keep its size bounds, and accept only what it documents.

var jsonSeeds = []string{
	``, ` `, `{}`, `[]`, `null`, `0`, `"s"`, `{"op":"get","key":"k"}`,
	`{"code":"bad_thing","message":"it broke"}`, `{"code":"Bad","message":"x"}`,
	`{"code":"a_b","message":12}`, `{"code":"x","message":"` + strings.Repeat("m", 5000) + `"}`,
	`{"code":"` + strings.Repeat("a", 65) + `"}`, `{"a":`, "\xff\xfe", `{"a":1}{"b":2}`, `  {"a":"\u00e9"}  `,
	`{"code":"ok","message":"\ud800"}`, `[{"x":[[[[[]]]]]}]`,
}

func FuzzParseCapabilityRequest(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		orig := bytes.Clone(raw)
		req, code, why := parseCapabilityRequest(raw)
		if code == 0 {
			if !json.Valid(req) || !bytes.Equal(req, raw) {
				t.Fatalf("accepted %q as %q", raw, req)
			}
			if tr := bytes.TrimLeft(req, " \t\r\n"); tr[0] != '{' {
				t.Fatalf("accepted a non-object %q", raw)
			}
			if len(raw) > 0 && &req[0] == &raw[0] {
				t.Fatal("request aliases guest memory")
			}
			return
		}
		if code != CodeInvalidRequest && code != CodeTooLarge || why == "" || req != nil {
			t.Fatalf("code %v why %q req %q", code, why, req)
		}
		if !bytes.Equal(raw, orig) {
			t.Fatal("input modified")
		}
	})
}

func FuzzParseToolError(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, buf []byte) {
		code, msg := parseToolError(buf)
		if len(code) > maxToolErrorCode || !toolCodeRE.MatchString(code) {
			t.Fatalf("code %q", code)
		}
		if len(msg) > maxToolErrorMessage || !utf8.ValidString(msg) {
			t.Fatalf("message of %d bytes, valid UTF-8 %v", len(msg), utf8.ValidString(msg))
		}
		if code != "tool_error" && !json.Valid(buf) {
			t.Fatalf("code %q from invalid JSON %q", code, buf)
		}
		te := &ToolError{Code: code, Message: msg}
		if !utf8.ValidString(te.Error()) {
			t.Fatal("Error() is not valid UTF-8")
		}
	})
}

func FuzzParseOutput(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, buf []byte) {
		out, err := parseOutput(buf)
		if err != nil {
			if !errors.Is(err, ErrInvalidOutput) && !errors.Is(err, ErrOutputTooLarge) {
				t.Fatalf("err = %v", err)
			}
			if out != nil {
				t.Fatal("value returned with an error")
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("accepted %q", buf)
		}
		if len(bytes.TrimSpace(buf)) == 0 {
			if string(out) != "null" {
				t.Fatalf("empty output gave %q", out)
			}
			return
		}
		if &out[0] == &buf[0] {
			t.Fatal("output aliases guest memory")
		}
	})
}

func FuzzLogBuffer(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), []byte("err\n"), int8(2))
	f.Add(bytes.Repeat([]byte("a"), 10000), []byte("\xff\xfe\n"), int8(-5))
	f.Fuzz(func(t *testing.T, out, errb []byte, level int8) {
		var b logBuffer
		st := &instState{}
		for i := range 40 {
			b.write(0, out)
			b.write(1, errb)
			st.noteStderr(errb)
			b.add(clampLevel(int32(level)+int32(i)), SourceLog, out)
		}
		b.flush()
		total := 0
		for _, r := range b.records {
			if len(r.Message) > MaxLogRecordBytes || !utf8.ValidString(r.Message) {
				t.Fatalf("record of %d bytes", len(r.Message))
			}
			if r.Level < LevelTrace || r.Level > LevelError {
				t.Fatalf("level %d", r.Level)
			}
			total += len(r.Message)
		}
		if total > MaxLogBytes || total != b.bytes {
			t.Fatalf("%d bytes logged, counted %d", total, b.bytes)
		}
		if bytes.Contains(errb, []byte(oomMarker)) && !st.oom {
			t.Fatal("out of memory not noticed")
		}
	})
}

func TestNoteStderrAcrossWrites(t *testing.T) {
	st := &instState{}
	for _, piece := range []string{"fatal error: ", "out of ", "mem", "ory", "\n"} {
		st.noteStderr([]byte(piece))
	}
	if !st.oom {
		t.Fatal("split report not noticed")
	}
	st = &instState{}
	st.noteStderr(append(bytes.Repeat([]byte("x"), 9000), "out of memory"...))
	if !st.oom {
		t.Fatal("report at the end of a big write not noticed")
	}
}

func FuzzSpan(f *testing.F) {
	f.Add(int32(0), int32(0))
	f.Add(int32(-1), int32(1))
	f.Add(int32(65530), int32(100))
	f.Fuzz(func(t *testing.T, ptr, n int32) {
		mem := make([]byte, 65536)
		b, ok := span(mem, ptr, n)
		if !ok {
			return
		}
		if n < 0 || len(b) != int(n) || uint64(uint32(ptr))+uint64(n) > uint64(len(mem)) {
			t.Fatalf("span(%d, %d) = %d bytes", ptr, n, len(b))
		}
		if cap(b) != len(b) {
			t.Fatal("span lets appends reach past its range")
		}
	})
}

func TestErrorDocument(t *testing.T) {
	b := errorDocument(CodeDenied, strings.Repeat("é", 1000)+"\xff")
	var doc struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Error.Code != "denied" || len(doc.Error.Message) > maxCapabilityErrorMessage {
		t.Fatalf("%s: %v", b, err)
	}
}

func TestGrantsCanonical(t *testing.T) {
	g, err := canonicalGrants(Grants{HTTPHosts: []string{"b", " a ", "", "b", "\t"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(g[kindHTTP], ",") != "a,b" {
		t.Fatalf("%q", g[kindHTTP])
	}
	if g.handle(kindHTTP, 1) != 10001 || g.handle(kindHTTP, 2) != -1 || g.handle(kindSecret, 0) != -1 {
		t.Fatal("handles")
	}
	if k, grant, ok := g.lookup(10001); !ok || k != KindHTTP || grant != "b" {
		t.Fatal("lookup")
	}
	if _, _, ok := g.lookup(20000); ok {
		t.Fatal("lookup of an ungranted handle")
	}
	many := make([]string, maxGrantsPerKind+1)
	for i := range many {
		many[i] = strings.Repeat("x", i+1)
	}
	if _, err := canonicalGrants(Grants{Channels: many}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("err = %v", err)
	}
}

func TestLimitsTighten(t *testing.T) {
	base := Limits{Fuel: 100, MemoryBytes: 1 << 20}
	got := Limits{Fuel: 200, MemoryBytes: 1 << 10, TableElements: 5}.tighten(base)
	if got.Fuel != 100 || got.MemoryBytes != 1<<10 || got.TableElements != 5 {
		t.Fatalf("%+v", got)
	}
}
