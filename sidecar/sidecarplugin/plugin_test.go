package sidecarplugin_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/palyra-go/palyra/host/errcode"
	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPureGo keeps the supervisor's side free of cgo and wasmtime.
func TestPureGo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/palyra-go/palyra/sidecar/sidecarplugin").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "wasmtime") || dep == "github.com/palyra-go/palyra/sidecar/internal/wasmrt" ||
			dep == "github.com/palyra-go/palyra/sidecar" {
			t.Errorf("sidecar/sidecarplugin depends on %s", dep)
		}
	}
}

func TestErrorCodes(t *testing.T) {
	for c := sidecarplugin.CodeInternal; c <= sidecarplugin.CodeNotGranted; c++ {
		p := sidecarplugin.ErrorCodeToProto(c)
		if int32(p) != -int32(c) {
			t.Errorf("ErrorCodeToProto(%v) = %v", c, p)
		}
		if back := sidecarplugin.ErrorCodeFromProto(p); back != c {
			t.Errorf("round trip %v -> %v -> %v", c, p, back)
		}
	}
	if got := sidecarplugin.ErrorCodeToProto(-42); got != sidecarv1.CapabilityErrorCode_CAPABILITY_ERROR_CODE_INTERNAL {
		t.Errorf("unknown code -> %v", got)
	}
	if got := sidecarplugin.ErrorCodeFromProto(0); got != sidecarplugin.CodeInternal {
		t.Errorf("unspecified -> %v", got)
	}
	for _, k := range []sidecarplugin.CapabilityKind{sidecarplugin.KindHTTP, sidecarplugin.KindSecret, sidecarplugin.KindStorage, sidecarplugin.KindChannel} {
		if sidecarplugin.KindFromProto(sidecarplugin.KindToProto(k)) != k {
			t.Errorf("kind %q does not round-trip", k)
		}
	}
}

// errTestOnly is a code registered by this test binary only.
var errTestOnly = errcode.New("sidecarplugin_test_failure", "test failure")

// TestErrorIs checks that an *Error unwraps to the sentinel of its code, and
// only to it; a code no linked package registered matches no sentinel but
// keeps its code.
func TestErrorIs(t *testing.T) {
	sentinels := []*errcode.Sentinel{errcode.ErrTimeout, errcode.ErrUnknownTool, errcode.ErrInvalidOutput, errTestOnly}
	tests := []struct {
		code string
		want *errcode.Sentinel
	}{
		{"timeout", errcode.ErrTimeout},
		{"unknown_tool", errcode.ErrUnknownTool},
		{"invalid_output", errcode.ErrInvalidOutput},
		{"sidecarplugin_test_failure", errTestOnly},
		{"fuel_exhausted", nil}, // the runtime's: not linked here
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			err := error(&sidecarplugin.Error{Op: "invoke", ErrorCode: tt.code, Message: "x"})
			wrapped := fmt.Errorf("call acme.echo: %w", err)
			for _, e := range []error{err, wrapped} {
				if got := errcode.Of(e); got != tt.code {
					t.Errorf("errcode.Of(%v) = %q", e, got)
				}
				for _, s := range sentinels {
					if got := errors.Is(e, s); got != (s == tt.want) {
						t.Errorf("errors.Is(%v, %s) = %v", e, s.Code(), got)
					}
				}
			}
		})
	}
}

// brokerFunc adapts a function to Broker.
type brokerFunc func(context.Context, sidecarplugin.CapabilityRequest) ([]byte, error)

func (f brokerFunc) Call(ctx context.Context, r sidecarplugin.CapabilityRequest) ([]byte, error) {
	return f(ctx, r)
}

// TestBrokerMapping runs the broker adapter over an in-memory gRPC
// connection: the host side's BrokerService server and the sidecar side's
// Broker client, as go-plugin connects them.
func TestBrokerMapping(t *testing.T) {
	tests := []struct {
		name    string
		result  []byte
		err     error
		want    string
		code    sidecarplugin.ABICode
		message string
	}{
		{name: "ok", result: []byte(`{"v":1}`), want: `{"v":1}`},
		{name: "refused", err: &sidecarplugin.CapabilityError{Code: sidecarplugin.CodeQuotaExceeded, Message: "slow down"},
			code: sidecarplugin.CodeQuotaExceeded, message: "slow down"},
		{name: "bad utf8 message", err: &sidecarplugin.CapabilityError{Code: sidecarplugin.CodeDenied, Message: "a\xffb"},
			code: sidecarplugin.CodeDenied, message: "a\uFFFDb"},
		{name: "deadline", err: context.DeadlineExceeded, code: sidecarplugin.CodeTimeout, message: "capability call timed out"},
		{name: "opaque", err: errors.New("secret detail"), code: sidecarplugin.CodeInternal, message: "internal error"},
		{name: "too large", result: make([]byte, sidecarplugin.MaxCapabilityResponseBytes+1),
			code: sidecarplugin.CodeTooLarge, message: "response too large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen sidecarplugin.CapabilityRequest
			b := sidecarplugin.NewBrokerServer(brokerFunc(func(_ context.Context, r sidecarplugin.CapabilityRequest) ([]byte, error) {
				seen = r
				return tt.result, tt.err
			}))
			client := sidecarplugin.NewBrokerClient(serve(t, func(s *grpc.Server) { sidecarv1.RegisterBrokerServiceServer(s, b) }))
			req := sidecarplugin.CapabilityRequest{InvocationID: "i", SkillID: "s", ToolID: "t",
				Kind: sidecarplugin.KindHTTP, Handle: 10000, Grant: "api.example.com", Request: []byte(`{}`)}
			got, err := client.Call(context.Background(), req)
			if seen.Grant != req.Grant || seen.Kind != req.Kind || seen.Handle != req.Handle || seen.InvocationID != "i" {
				t.Errorf("broker saw %+v", seen)
			}
			if tt.code == 0 {
				if err != nil || string(got) != tt.want {
					t.Fatalf("Call = %q, %v", got, err)
				}
				return
			}
			var ce *sidecarplugin.CapabilityError
			if !errors.As(err, &ce) || ce.Code != tt.code || ce.Message != tt.message {
				t.Fatalf("Call error = %v, want %v %q", err, tt.code, tt.message)
			}
		})
	}
}

// serve starts a gRPC server on an in-memory listener and returns a
// connection to it; both end with the test.
func serve(t *testing.T, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	register(s)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		s.Stop()
		<-done
	})
	return conn
}

func TestClientFillsBrokerID(t *testing.T) {
	var got uint32
	fake := &fakeSidecar{load: func(r *sidecarv1.LoadSkillRequest) { got = r.GetBrokerId() }}
	conn := serve(t, func(s *grpc.Server) { sidecarv1.RegisterSidecarServiceServer(s, fake) })
	c := sidecarplugin.NewClient(conn, 7)
	req := &sidecarv1.LoadSkillRequest{SkillId: "x"}
	if _, err := c.LoadSkill(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got != 7 || req.GetBrokerId() != 0 {
		t.Errorf("sent broker id %d, request now %d", got, req.GetBrokerId())
	}
	res, err := c.Invoke(context.Background(), &sidecarv1.InvokeRequest{})
	var se *sidecarplugin.Error
	if !errors.As(err, &se) || se.Code() != "timeout" || res.GetStats().GetFuelConsumed() != 5 {
		t.Errorf("Invoke = %v, %v", res, err)
	}
}

type fakeSidecar struct {
	sidecarv1.UnimplementedSidecarServiceServer
	load func(*sidecarv1.LoadSkillRequest)
}

func (f *fakeSidecar) LoadSkill(_ context.Context, r *sidecarv1.LoadSkillRequest) (*sidecarv1.LoadSkillResponse, error) {
	f.load(r)
	return &sidecarv1.LoadSkillResponse{}, nil
}

func (f *fakeSidecar) Invoke(context.Context, *sidecarv1.InvokeRequest) (*sidecarv1.InvokeResponse, error) {
	return &sidecarv1.InvokeResponse{ErrorCode: "timeout", ErrorMessage: "late", Stats: &sidecarv1.Stats{FuelConsumed: 5}}, nil
}
