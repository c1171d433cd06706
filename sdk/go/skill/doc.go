// Package skill is the Go guest SDK for Palyra-Go skills: WebAssembly modules
// built with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared that the Palyra-Go
// sidecar runs under the Palyra skills ABI v1 (sdk/ABI.md).
//
// A skill registers one handler per tool id in a package init function and
// has an empty main. Importing this package exports the module's entrypoint,
// palyra_plugin_main, which reads the input document, dispatches on its
// tool_id, and writes the handler's output, or a tool error document
// {"code","message"} with a non-zero result. The file needs no build
// constraint (the SDK keeps its wasip1-only parts to itself), so the same
// handlers build into the module and run under a native go test:
//
//	package main
//
//	import "github.com/palyra-go/palyra/sdk/go/skill"
//
//	type EchoIn struct {
//		Text string `json:"text"`
//	}
//
//	type EchoOut struct {
//		Echo string `json:"echo"`
//	}
//
//	func init() {
//		skill.Handle("acme.echo", func(ctx *skill.Context, in EchoIn) (EchoOut, error) {
//			if in.Text == "" {
//				return EchoOut{}, skill.NewError("empty_text", "text is empty")
//			}
//			ctx.Logf(skill.LevelInfo, "echo %d bytes", len(in.Text))
//			return EchoOut{Echo: in.Text}, nil
//		})
//	}
//
//	func main() {}
//
// Build it with:
//
//	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o echo.wasm .
//
// and test it natively, in a _test.go file beside it, with package skilltest
// (see Testing):
//
//	func TestEcho(t *testing.T) {
//		res := skilltest.Run(skill.DefaultMux, skilltest.Call{ToolID: "acme.echo", Input: EchoIn{Text: "hi"}})
//		if res.Status != 0 || string(res.Output) != `{"echo":"hi"}` {
//			t.Fatalf("status %d: %s", res.Status, res.Output)
//		}
//	}
//
// `palyra skills new acme.NAME` writes such a project, with its skill.toml
// and a Makefile.
//
// # Operator config
//
// A skill whose skill.toml declares a [config] schema (docs/skill-toml.md)
// reads the values its operator set (`palyra skills config set`, the API, the
// console) with Context.Config, one JSON object, or ConfigInto, typed:
//
//	var cfg struct {
//		Endpoint string `json:"endpoint"`
//		Token    string `json:"api_token"` // sensitive: keep it out of logs
//	}
//	if err := ctx.ConfigInto(&cfg); err != nil {
//		return Out{}, err
//	}
//
// The host resolves the config at every call (defaults filled in, checked
// against the schema, a call with a required key missing refused before the
// skill runs), so a change applies to the next call. skilltest.Call.Config
// sets it in tests. The module imports config-len and config-read only when
// it calls them (sdk/ABI.md §3.1).
//
// # Using the SDK from your own module
//
// The SDK is part of the module github.com/palyra-go/palyra, which is not
// published to a module proxy yet. A skill in its own module therefore
// requires that module and replaces it with a local checkout of Palyra-Go:
//
//	go mod init example.com/acme/echo
//	go mod edit -require=github.com/palyra-go/palyra@v0.0.0-00010101000000-000000000000 //		-replace=github.com/palyra-go/palyra=/path/to/palyra
//	go test ./...
//
// The SDK imports only the standard library, so this needs no download and
// no go.sum entry. The replace line is the recommended way because it lives
// in the skill's go.mod (what palyra skills new writes, with the checkout it
// was built from or --sdk PATH). A go.work file (go work init . /path/to/palyra)
// works too, but then the skill's module builds only inside that workspace
// and its go.mod says nothing of where the SDK comes from. A skill placed
// inside a Palyra-Go checkout is outside the checkout's go.work: build and
// test it with GOWORK=off (the scaffold's Makefile sets it).
//
// # Why init and not main
//
// A c-shared Go module is a WASI reactor: the host calls its _initialize
// export once, which runs the Go runtime's start-up and every package init
// function, and then pauses without running main (runtime.main returns to the
// host when islibrary is set). Handlers registered in main would never exist.
// The host makes a fresh instance for every call, so nothing but storage
// survives from one call to the next.
//
// # Errors
//
// A handler returns an *Error (NewError, Errorf) to report a stable code; any
// other error is reported with code "tool_error". The SDK itself reports
// "unknown_tool", "invalid_input", "invalid_output", "output_too_large",
// "abi_error" and "panic" (a handler panic is recovered and reported).
//
// # Hooks
//
// A skill's tool bound as a hook (docs/hooks.md) decides a run phase with
// its exit code. Its handler returns the decision as an error: Block,
// RequestApproval, Annotate, TransformPreview or FailRun (a *HookDecision)
// end the tool with that decision's exit code and the reason as the tool
// error's message, which the host shows as the hook's reason. nil
// continues; any other error exits with 1, which the host reads as an
// annotation.
//
// # Capabilities
//
// The Context passed to a handler carries the call's grants and a helper per
// capability kind: HTTP (requests to granted hosts, with secrets injected by
// the host into headers so the guest never sees them), Storage (a key-value
// space under a granted prefix), Secret (describe only) and Channel (send).
// Every failure is a *CapabilityError that errors.Is matches against
// ErrNotGranted, ErrDenied, ErrTimeout and the other sentinels of ABI §7, and
// that carries the host's error detail.
//
//	resp, err := ctx.HTTP().Get("https://api.example.com/v1/items",
//		skill.SecretHeader{Name: "authorization", Secret: "api_token", Format: "Bearer {secret}"})
//	if errors.Is(err, skill.ErrDenied) {
//		return Out{}, skill.Errorf("egress_denied", "%v", err)
//	}
//
// # Testing
//
// The host functions sit behind an internal interface; files that bind it to
// the real //go:wasmimport functions build only for wasip1. Package
// skilltest runs a Mux natively against an in-memory input document and a
// scripted capability backend, so handlers are tested with plain go test.
//
// # Concurrency
//
// Register handlers before the first call (in init). A Context, and the
// helpers it returns, belong to one call and are not for concurrent use.
package skill
