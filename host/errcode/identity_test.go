package errcode_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/mcpserver"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// daemonStub is an HTTP server on 127.0.0.1 that answers every request with
// the error body of the daemon API for the code set last.
type daemonStub struct {
	mu   sync.Mutex
	code string
	msg  string
}

func (d *daemonStub) set(code, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.code, d.msg = code, msg
}

func (d *daemonStub) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	d.mu.Lock()
	code, msg := d.code, d.msg
	d.mu.Unlock()
	var body struct {
		Error struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	body.Error.Code, body.Error.Message, body.Error.RequestID = code, msg, "req-1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(daemon.HTTPStatus(code))
	_ = json.NewEncoder(w).Encode(body)
}

// TestEveryOriginMatchesTheSentinel checks, for every code the host
// packages register, that errors.Is gives one answer whatever the error's
// origin: the sentinel itself, the sentinel wrapped with context, a
// sidecar's failure over gRPC (*sidecarplugin.Error), the daemon's answer
// over HTTP (decoded by the client from a real HTTP server) and over gRPC
// (client.FromGRPC). Each matches the code's one sentinel, carries its
// code, and matches no other code's sentinel.
func TestEveryOriginMatchesTheSentinel(t *testing.T) {
	stub := &daemonStub{}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c, err := client.New(srv.URL, "token", client.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}

	all := errcode.All()
	if len(all) < 100 {
		t.Fatalf("only %d codes registered: are the host packages linked?", len(all))
	}
	sentinels := make([]*errcode.Sentinel, len(all))
	for i, e := range all {
		if sentinels[i] = errcode.Lookup(e.Code); sentinels[i] == nil || sentinels[i].Code() != e.Code {
			t.Fatalf("Lookup(%q) = %v", e.Code, sentinels[i])
		}
	}
	for i, e := range all {
		want := sentinels[i]
		stub.set(e.Code, e.Message)
		httpErr := c.Health(t.Context())
		grpcErr := client.FromGRPC(
			status.Error(daemon.GRPCCode(e.Code), e.Code+": "+e.Message),
			metadata.Pairs(daemon.TrailerErrorCode, e.Code))
		origins := []struct {
			name string
			err  error
		}{
			{"sentinel", want},
			{"wrapped", fmt.Errorf("ctx acme.echo: %w", want)},
			{"sidecar", &sidecarplugin.Error{Op: "invoke", ErrorCode: e.Code, Message: e.Message}},
			{"wrapped sidecar", fmt.Errorf("host: acme.echo: %w", &sidecarplugin.Error{Op: "invoke", ErrorCode: e.Code})},
			{"daemon http", httpErr},
			{"daemon grpc", grpcErr},
		}
		for _, o := range origins {
			if got := errcode.Of(o.err); got != e.Code {
				t.Errorf("%s %s: errcode.Of = %q (%v)", e.Code, o.name, got, o.err)
				continue
			}
			for j, s := range sentinels {
				if got := errors.Is(o.err, s); got != (j == i) {
					t.Errorf("%s %s: errors.Is(_, sentinel of %s) = %v", e.Code, o.name, s.Code(), got)
				}
			}
		}
		var ce *client.Error
		if !errors.As(httpErr, &ce) || ce.Status != daemon.HTTPStatus(e.Code) || ce.Message != e.Message || ce.RequestID != "req-1" {
			t.Errorf("%s: the HTTP answer decoded to %#v", e.Code, httpErr)
		}
		if !errors.As(grpcErr, &ce) || ce.Message != e.Message {
			t.Errorf("%s: the gRPC status decoded to %#v", e.Code, grpcErr)
		}
	}
}

// TestReexportsAreTheSentinel checks that every name for a code is the
// same value: install.ErrQuarantined used to be another sentinel than
// host.ErrQuarantined, so errors.Is(err, host.ErrQuarantined) was false for
// the installer's error.
func TestReexportsAreTheSentinel(t *testing.T) {
	tests := []struct {
		code  string
		names []error
	}{
		{"skill_not_found", []error{host.ErrSkillNotFound, inventory.ErrNotFound, install.ErrNotFound}},
		{"skill_quarantined", []error{host.ErrQuarantined, install.ErrQuarantined}},
		{"skill_status_missing", []error{host.ErrNoStatus, inventory.ErrNoStatus}},
		{"override_required", []error{install.ErrOverrideRequired, daemon.ErrOverrideRequired}},
		{"unknown_tool", []error{errcode.ErrUnknownTool, host.ErrUnknownTool, manifest.ErrUnknownTool, mcpserver.ErrUnknownTool}},
		{"invalid_input", []error{errcode.ErrInvalidInput, host.ErrInvalidInput, manifest.ErrInputSchema}},
		{"invalid_output", []error{errcode.ErrInvalidOutput, host.ErrInvalidOutput, manifest.ErrOutputSchema}},
		{"output_too_large", []error{errcode.ErrOutputTooLarge, host.ErrOutputTooLarge}},
		{"timeout", []error{errcode.ErrTimeout, supervisor.ErrTimeout}},
		{"canceled", []error{errcode.ErrCanceled, supervisor.ErrCanceled}},
		{"crashlooping", []error{supervisor.ErrCrashLooping, host.ErrCrashLooping}},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			want := errcode.Lookup(tt.code)
			for i, name := range tt.names {
				if name != error(want) {
					t.Errorf("name %d of %s is %p, not the registered sentinel %p", i, tt.code, name, want)
				}
				for _, other := range tt.names {
					if !errors.Is(fmt.Errorf("ctx: %w", name), other) {
						t.Errorf("errors.Is(wrapped name %d, %v) = false", i, other)
					}
				}
			}
		})
	}
}
