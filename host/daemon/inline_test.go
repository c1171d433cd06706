package daemon_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/palyra-go/palyra/host"
	hostv1 "github.com/palyra-go/palyra/proto/palyra/host/v1"
)

// TestRunInlineAPI runs an inline module over HTTP (POST /v1/dev/run) and
// gRPC (RunInline) on a daemon whose profile allows it, and checks the
// refusal of one whose profile does not: 403 and PermissionDenied with
// inline_not_allowed.
func TestRunInlineAPI(t *testing.T) {
	echo := readFixture(t, "../../testdata/wasm/echo.wasm")
	allowed := t.TempDir()
	if err := os.WriteFile(filepath.Join(allowed, "policy.toml"), []byte("[dev]\nallow_inline = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	on := startDaemon(t, allowed, "")
	defer on.stop()
	off := startDaemon(t, t.TempDir(), "")
	defer off.stop()

	// HTTP: the module is standard base64 in the JSON body.
	body := map[string]any{"module": echo, "module_name": "echo.wasm", "tool_id": "dev.t", "input": map[string]string{"text": "http"}, "timeout_ms": 30000}
	var res host.CallResult
	on.must(http.StatusOK, "POST", "/v1/dev/run", body, &res)
	var doc struct {
		Input struct{ Text string } `json:"input"`
	}
	if json.Unmarshal(res.Output, &doc) != nil || doc.Input.Text != "http" || res.SkillID != "dev:dev.inline" || !strings.HasPrefix(res.Version, host.InlineVersionPrefix) {
		t.Fatalf("inline run over HTTP: %+v (output %s)", res, res.Output)
	}
	if st, data := off.do("POST", "/v1/dev/run", body, nil); st != http.StatusForbidden || errCode(t, data) != "inline_not_allowed" || !strings.Contains(string(data), "allow_inline") {
		t.Fatalf("inline run on a daemon that does not allow it: HTTP %d %s", st, data)
	}
	if st, data := on.do("POST", "/v1/dev/run", map[string]any{"module": echo, "tool_id": "dev.t", "extra": 1}, nil); st != http.StatusBadRequest || errCode(t, data) != "bad_request" {
		t.Fatalf("unknown field: HTTP %d %s", st, data)
	}
	if st, data := on.do("GET", "/v1/dev/run", nil, nil); st < 400 || st == http.StatusOK {
		t.Fatalf("GET /v1/dev/run: HTTP %d %s", st, data)
	}

	// gRPC.
	bg, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gr, err := dialGRPC(t, on).RunInline(authed(bg, on.token), &hostv1.RunInlineRequest{Module: echo, ToolId: "dev.t", InputJson: []byte(`{"text":"grpc"}`)})
	if err != nil || json.Unmarshal(gr.GetResult().GetOutputJson(), &doc) != nil || doc.Input.Text != "grpc" {
		t.Fatalf("inline run over gRPC: %v, %v", gr, err)
	}
	_, err = dialGRPC(t, off).RunInline(authed(bg, off.token), &hostv1.RunInlineRequest{Module: echo, ToolId: "dev.t"})
	if status.Code(err) != codes.PermissionDenied || grpcErrCode(err) != "inline_not_allowed" {
		t.Fatalf("inline run over gRPC on a daemon that does not allow it: %v", err)
	}
	_, err = dialGRPC(t, on).RunInline(authed(bg, on.token), &hostv1.RunInlineRequest{Module: []byte("not wasm"), ToolId: "dev.t"})
	if status.Code(err) != codes.InvalidArgument || grpcErrCode(err) != "bad_request" {
		t.Fatalf("not a module over gRPC: %v", err)
	}
}
