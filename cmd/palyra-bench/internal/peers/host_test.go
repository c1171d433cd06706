package peers

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v25"
)

// The palyra imports of the WAT modules below.
const watImports = `
  (import "palyra:skills/host@1" "input-len" (func $input_len (result i32)))
  (import "palyra:skills/host@1" "input-read" (func $input_read (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "output-write" (func $output_write (param i32 i32) (result i32)))
  (import "palyra:skills/host@1" "log" (func $log (param i32 i32 i32)))
  (import "palyra:skills/host@1" "capability-call" (func $cap (param i32 i32 i32) (result i32)))
  (import "palyra:skills/host@1" "response-len" (func $resp_len (result i32)))
  (import "palyra:skills/host@1" "response-read" (func $resp_read (param i32 i32) (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "http-count" (func $http_count (result i32)))
  (import "palyra:plugins/host-capabilities@0.1.0" "storage-handle" (func $storage_handle (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
`

// watModule is a module with the palyra imports, a 17-page memory (more
// than the 1 MiB output limit), and body.
func watModule(body string) string {
	return "(module" + watImports + `  (memory (export "memory") 17)` + body + ")"
}

// hostTests check the palyra host functions of the wasmtime and wazero peers
// with hand-written modules. input is the tool input; the module's output
// must be want, or its tool error have code.
var hostTests = []struct {
	name, body, input, want, code string
}{
	{
		name: "input document round trip",
		body: `(func (export "palyra_plugin_main") (result i32) (local $n i32)
		  (local.set $n (call $input_len))
		  (drop (call $input_read (i32.const 0) (local.get $n)))
		  (drop (call $output_write (i32.const 0) (local.get $n)))
		  (i32.const 0))`,
		input: `{"text":"hi"}`,
	},
	{
		name: "nothing granted",
		body: `(data (i32.const 0) "true")
		  (func (export "palyra_plugin_main") (result i32)
		  (if (i32.ne (call $http_count) (i32.const 0)) (then (return (i32.const 2))))
		  (if (i32.ne (call $storage_handle (i32.const 0)) (i32.const -1)) (then (return (i32.const 3))))
		  (drop (call $output_write (i32.const 0) (i32.const 4)))
		  (i32.const 0))`,
		want: `true`,
	},
	{
		name: "capability-call is not_granted with a readable detail",
		body: `(func (export "palyra_plugin_main") (result i32) (local $n i32)
		  (if (i32.ne (call $cap (i32.const 10000) (i32.const 0) (i32.const 2)) (i32.const -1)) (then (return (i32.const 2))))
		  (local.set $n (call $resp_len))
		  (drop (call $resp_read (i32.const 100) (local.get $n)))
		  (drop (call $output_write (i32.const 100) (local.get $n)))
		  (i32.const 0))`,
		want: string(notGrantedDocument),
	},
	{
		name: "no pending response before a capability-call",
		body: `(data (i32.const 0) "true")
		  (func (export "palyra_plugin_main") (result i32)
		  (if (i32.ne (call $resp_len) (i32.const -3)) (then (return (i32.const 2))))
		  (drop (call $output_write (i32.const 0) (i32.const 4)))
		  (i32.const 0))`,
		want: `true`,
	},
	{
		name: "pointers outside memory are invalid_request",
		body: `(data (i32.const 0) "true")
		  (func (export "palyra_plugin_main") (result i32)
		  (if (i32.ne (call $input_read (i32.const 0xfffffff0) (i32.const 100)) (i32.const -3)) (then (return (i32.const 2))))
		  (if (i32.ne (call $output_write (i32.const 0x110000) (i32.const 1)) (i32.const -3)) (then (return (i32.const 3))))
		  (if (i32.ne (call $cap (i32.const 10000) (i32.const -1) (i32.const 2)) (i32.const -3)) (then (return (i32.const 4))))
		  (call $log (i32.const 2) (i32.const -1) (i32.const 5))
		  (drop (call $output_write (i32.const 0) (i32.const 4)))
		  (i32.const 0))`,
		want: `true`,
	},
	{
		name: "output over 1 MiB is too_large and not appended",
		body: `(data (i32.const 0) "\"ok\"")
		  (func (export "palyra_plugin_main") (result i32)
		  (if (i32.ne (call $output_write (i32.const 0) (i32.const 0x100001)) (i32.const -4)) (then (return (i32.const 2))))
		  (drop (call $output_write (i32.const 0) (i32.const 4)))
		  (i32.const 0))`,
		want: `"ok"`,
	},
	{
		name: "no invocation is bound during _initialize",
		body: `(global $init (mut i32) (i32.const 0))
		  (data (i32.const 0) "true")
		  (func (export "_initialize")
		  (if (i32.eq (call $input_len) (i32.const -3))
		    (then (if (i32.eq (call $output_write (i32.const 0) (i32.const 4)) (i32.const -3))
		      (then (if (i32.eq (call $cap (i32.const 10000) (i32.const 0) (i32.const 0)) (i32.const -3))
		        (then (global.set $init (i32.const 1)))))))))
		  (func (export "palyra_plugin_main") (result i32)
		  (if (i32.eqz (global.get $init)) (then (return (i32.const 2))))
		  (drop (call $output_write (i32.const 0) (i32.const 4)))
		  (i32.const 0))`,
		want: `true`,
	},
	{
		name: "empty output is null",
		body: `(func (export "palyra_plugin_main") (result i32) (i32.const 0))`,
		want: `null`,
	},
	{
		name: "tool error document",
		body: `(data (i32.const 0) "{\"code\":\"empty_text\",\"message\":\"text is empty\"}")
		  (func (export "palyra_plugin_main") (result i32)
		  (drop (call $output_write (i32.const 0) (i32.const 47)))
		  (i32.const 1))`,
		code: "empty_text",
	},
	{
		name: "tool error text",
		body: `(data (i32.const 0) "boom")
		  (func (export "palyra_plugin_main") (result i32)
		  (drop (call $output_write (i32.const 0) (i32.const 4)))
		  (i32.const 7))`,
		code: "tool_error",
	},
	{
		name: "proc_exit 0 is success",
		body: `(data (i32.const 0) "{\"ok\":1}")
		  (func (export "palyra_plugin_main") (result i32)
		  (drop (call $output_write (i32.const 0) (i32.const 8)))
		  (call $proc_exit (i32.const 0))
		  (i32.const 9))`,
		want: `{"ok":1}`,
	},
	{
		name: "proc_exit non-zero is a tool error",
		body: `(func (export "palyra_plugin_main") (result i32)
		  (call $proc_exit (i32.const 3))
		  (i32.const 0))`,
		code: "tool_error",
	},
}

// palyraPeers are the peers that run palyra-ABI modules.
var palyraPeers = []struct {
	name string
	new  func(ctx context.Context, wasm []byte) (Runner, error)
}{
	{NameWasmtime, func(_ context.Context, wasm []byte) (Runner, error) { return NewWasmtime(wasm) }},
	{NameWazero, NewWazero},
}

func TestPalyraHost(t *testing.T) {
	ctx := context.Background()
	for _, p := range palyraPeers {
		for _, tt := range hostTests {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				wasm, err := wasmtime.Wat2Wasm(watModule(tt.body))
				if err != nil {
					t.Fatal(err)
				}
				r, err := p.new(ctx, wasm)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close(ctx)
				input := tt.input
				if input == "" {
					input = `{}`
				}
				out, err := r.Call(ctx, []byte(input))
				switch {
				case tt.code != "":
					var te *ToolError
					if !errors.As(err, &te) || te.Code != tt.code {
						t.Fatalf("got %s, %v; want a tool error %q", out, err, tt.code)
					}
				case err != nil:
					t.Fatal(err)
				case tt.want != "":
					if string(out) != tt.want {
						t.Fatalf("output %s, want %s", out, tt.want)
					}
				default:
					checkInputDocument(t, out, tt.input)
				}
			})
		}
	}
}

// checkInputDocument checks an input document of sdk/ABI.md §3.
func checkInputDocument(t *testing.T, doc []byte, input string) {
	t.Helper()
	var d struct {
		ABI            string           `json:"abi"`
		InvocationID   string           `json:"invocation_id"`
		SkillID        string           `json:"skill_id"`
		ToolID         string           `json:"tool_id"`
		Input          json.RawMessage  `json:"input"`
		Grants         map[string][]any `json:"grants"`
		DeadlineUnixMS int64            `json:"deadline_unix_ms"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatalf("input document %s: %v", doc, err)
	}
	if d.ABI != abiVersion || d.SkillID != "palyra.echo" || d.ToolID != "palyra.echo" ||
		!strings.HasPrefix(d.InvocationID, "peer-") || string(d.Input) != input {
		t.Errorf("input document %s: wrong abi, ids or input", doc)
	}
	for _, kind := range []string{"http", "secrets", "storage", "channels"} {
		if g, ok := d.Grants[kind]; !ok || g == nil || len(g) != 0 {
			t.Errorf("input document %s: grants.%s is not []", doc, kind)
		}
	}
	if dl := time.UnixMilli(d.DeadlineUnixMS); dl.Before(time.Now()) {
		t.Errorf("input document %s: deadline %v is in the past", doc, dl)
	}
}

func TestInputDocument(t *testing.T) {
	dl := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), dl)
	defer cancel()
	a, b := inputDocument(ctx, []byte(`{"text":"a"}`)), inputDocument(ctx, nil)
	var da, db struct {
		InvocationID   string          `json:"invocation_id"`
		Input          json.RawMessage `json:"input"`
		DeadlineUnixMS int64           `json:"deadline_unix_ms"`
	}
	if err := json.Unmarshal(a, &da); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &db); err != nil {
		t.Fatal(err)
	}
	if da.InvocationID == db.InvocationID {
		t.Errorf("two calls share invocation_id %q", da.InvocationID)
	}
	if string(da.Input) != `{"text":"a"}` || string(db.Input) != `null` {
		t.Errorf("inputs %s and %s, want {\"text\":\"a\"} and null", da.Input, db.Input)
	}
	if da.DeadlineUnixMS != dl.UnixMilli() {
		t.Errorf("deadline_unix_ms %d, want the ctx deadline %d", da.DeadlineUnixMS, dl.UnixMilli())
	}
}

func TestMissingEntrypoint(t *testing.T) {
	wasm, err := wasmtime.Wat2Wasm(`(module (func (export "run") (result i32) (i32.const 0)))`)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range palyraPeers {
		if r, err := p.new(ctx, wasm); err == nil || !strings.Contains(err.Error(), entrypoint) {
			if r != nil {
				r.Close(ctx)
			}
			t.Errorf("%s: a module without %s: %v, want an error naming it", p.name, entrypoint, err)
		}
	}
}
