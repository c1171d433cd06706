package peers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// guests holds the two guests, built once per test binary.
var guests struct {
	once         sync.Once
	echo, extism []byte
	err          error
}

// buildGuests returns the echo example (Palyra ABI) and the Extism guest.
func buildGuests(tb testing.TB) (echo, extism []byte) {
	tb.Helper()
	guests.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		dir := tb.TempDir() // the bytes are read before it goes
		p, err := examplebuild.Build(ctx, "echo", dir)
		if err != nil {
			guests.err = err
			return
		}
		if guests.echo, err = os.ReadFile(p); err != nil {
			guests.err = err
			return
		}
		if p, err = BuildExtismGuest(ctx, dir); err != nil {
			guests.err = err
			return
		}
		guests.extism, guests.err = os.ReadFile(p)
	})
	if guests.err != nil {
		tb.Fatal(guests.err)
	}
	return guests.echo, guests.extism
}

// peer makes one runner.
type peer struct {
	name string
	new  func(ctx context.Context, echo, extism []byte) (Runner, error)
	// badJSONCode is the guest's code for an input that is not JSON: the
	// palyra guests see a malformed input document (abi_error), the
	// Extism guest the raw input (invalid_input).
	badJSONCode string
}

var peerTable = []peer{
	{NameWasmtime, func(_ context.Context, echo, _ []byte) (Runner, error) { return NewWasmtime(echo) }, "abi_error"},
	{NameWazero, func(ctx context.Context, echo, _ []byte) (Runner, error) { return NewWazero(ctx, echo) }, "abi_error"},
	{NameExtism, func(ctx context.Context, _, extism []byte) (Runner, error) { return NewExtism(ctx, extism) }, "invalid_input"},
}

func TestRunners(t *testing.T) {
	echo, extism := buildGuests(t)
	ctx := context.Background()
	for _, p := range peerTable {
		t.Run(p.name, func(t *testing.T) {
			r, err := p.new(ctx, echo, extism)
			if err != nil {
				t.Fatal(err)
			}
			if r.Name() != p.name {
				t.Errorf("Name() = %q, want %q", r.Name(), p.name)
			}

			t.Run("hello", func(t *testing.T) {
				for i := range 3 {
					out, err := r.Call(ctx, []byte(`{"text":"hello"}`))
					if err != nil {
						t.Fatalf("call %d: %v", i, err)
					}
					if string(out) != `{"echo":"hello"}` {
						t.Fatalf("call %d: output %s, want {\"echo\":\"hello\"}", i, out)
					}
				}
			})

			t.Run("outputs", func(t *testing.T) {
				tests := []struct{ name, in, want string }{
					{"empty text", `{"text":""}`, `{"echo":""}`},
					{"no text", `{}`, `{"echo":""}`},
					{"null input", `null`, `{"echo":""}`},
					{"no input", ``, `{"echo":""}`},
					{"not HTML-escaped", `{"text":"<a&b>"}`, `{"echo":"<a&b>"}`},
					{"unicode", `{"text":"h\u00e9llo ☃"}`, `{"echo":"héllo ☃"}`},
					{"unknown field", `{"text":"x","extra":1}`, `{"echo":"x"}`},
				}
				for _, tt := range tests {
					out, err := r.Call(ctx, []byte(tt.in))
					if err != nil {
						t.Errorf("%s: %v", tt.name, err)
						continue
					}
					if string(out) != tt.want {
						t.Errorf("%s: output %s, want %s", tt.name, out, tt.want)
					}
				}
			})

			t.Run("tool errors", func(t *testing.T) {
				tests := []struct{ name, in, code string }{
					{"not JSON", `not json`, p.badJSONCode},
					{"wrong type", `{"text":5}`, "invalid_input"},
				}
				for _, tt := range tests {
					out, err := r.Call(ctx, []byte(tt.in))
					var te *ToolError
					if !errors.As(err, &te) {
						t.Errorf("%s: got %s, %v; want a *ToolError", tt.name, out, err)
						continue
					}
					if te.Code != tt.code || te.Message == "" {
						t.Errorf("%s: tool error %q %q, want code %q and a message", tt.name, te.Code, te.Message, tt.code)
					}
				}
			})

			t.Run("concurrent", func(t *testing.T) {
				var wg sync.WaitGroup
				errs := make(chan error, 4*3)
				for g := range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range 3 {
							text := fmt.Sprintf("g%d-%d", g, i)
							out, err := r.Call(ctx, []byte(`{"text":"`+text+`"}`))
							if want := `{"echo":"` + text + `"}`; err != nil || string(out) != want {
								errs <- fmt.Errorf("goroutine %d call %d: %s, %v; want %s", g, i, out, err, want)
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Error(err)
				}
			})

			t.Run("canceled", func(t *testing.T) {
				cctx, cancel := context.WithCancel(ctx)
				cancel()
				if _, err := r.Call(cctx, []byte(`{"text":"hello"}`)); !errors.Is(err, context.Canceled) {
					t.Errorf("Call with a canceled ctx: %v, want context.Canceled", err)
				}
			})

			if err := r.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := r.Close(ctx); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, err := r.Call(ctx, []byte(`{"text":"hello"}`)); !errors.Is(err, ErrClosed) {
				t.Errorf("Call after Close: %v, want ErrClosed", err)
			}
		})
	}
}

func TestBuildExtismGuestReplaces(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/extismguest.wasm", []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := BuildExtismGuest(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		t.Fatalf("%s is not a wasm module (%d bytes)", p, len(b))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"extismguest.wasm"}) {
		t.Errorf("outDir holds %v, want only extismguest.wasm (no temporary file left)", names)
	}
}

func TestToolError(t *testing.T) {
	long := make([]byte, maxErrorMessageBytes+10)
	for i := range long {
		long[i] = 'x'
	}
	copy(long[maxErrorMessageBytes-1:], "é") // a rune across the cut
	tests := []struct {
		name, doc, code, message string
	}{
		{"document", `{"code":"empty_text","message":"text is empty"}`, "empty_text", "text is empty"},
		{"plain text", `boom`, "tool_error", "boom"},
		{"no code", `{"message":"m"}`, "tool_error", `{"message":"m"}`},
		{"empty", ``, "tool_error", ""},
		{"long text cut on a rune boundary", string(long), "tool_error", string(long[:maxErrorMessageBytes-1])},
	}
	for _, tt := range tests {
		te := toolError([]byte(tt.doc))
		if te.Code != tt.code || te.Message != tt.message {
			t.Errorf("%s: got %q %q, want %q %q", tt.name, te.Code, te.Message, tt.code, tt.message)
		}
	}
}

// BenchmarkCall measures one call of palyra.echo per runner, instance
// creation included. Besides ns/op (the mean) it reports the median.
func BenchmarkCall(b *testing.B) {
	echo, extism := buildGuests(b)
	ctx := context.Background()
	for _, p := range peerTable {
		b.Run(p.name, func(b *testing.B) {
			r, err := p.new(ctx, echo, extism)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close(ctx)
			in := []byte(`{"text":"hello"}`)
			if _, err := r.Call(ctx, in); err != nil { // warm up
				b.Fatal(err)
			}
			var times []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := r.Call(ctx, in); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "median-ns/call")
		})
	}
}
