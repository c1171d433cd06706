package client_test

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/errcode"
)

func TestFromGRPC(t *testing.T) {
	quarantined := status.Error(codes.FailedPrecondition, "skill_quarantined: skill is quarantined: acme.echo 1.0.0")
	transport := status.Error(codes.Unavailable, "connection refused")
	tests := []struct {
		name     string
		err      error
		trailer  metadata.MD
		code     string
		message  string
		sentinel error
	}{
		{"daemon answer", quarantined, metadata.Pairs(daemon.TrailerErrorCode, "skill_quarantined"),
			"skill_quarantined", "skill is quarantined: acme.echo 1.0.0", host.ErrQuarantined},
		{"code not linked here", status.Error(codes.ResourceExhausted, "fuel_exhausted: fuel exhausted"),
			metadata.Pairs(daemon.TrailerErrorCode, "fuel_exhausted"), "fuel_exhausted", "fuel exhausted", nil},
		{"no trailer", transport, nil, errcode.Internal, "", nil},
		{"two codes", quarantined, metadata.Pairs(daemon.TrailerErrorCode, "a", daemon.TrailerErrorCode, "b"), errcode.Internal, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := client.FromGRPC(tt.err, tt.trailer)
			if errcode.Of(got) != tt.code {
				t.Errorf("errcode.Of = %q, want %q", errcode.Of(got), tt.code)
			}
			var ce *client.Error
			if tt.message == "" {
				if got != tt.err {
					t.Errorf("FromGRPC = %v, want the error unchanged", got)
				}
				return
			}
			if !errors.As(got, &ce) || ce.Message != tt.message || ce.Status != daemon.HTTPStatus(tt.code) {
				t.Fatalf("FromGRPC = %#v", got)
			}
			if tt.sentinel != nil && !errors.Is(got, tt.sentinel) {
				t.Errorf("errors.Is(%v, %v) = false", got, tt.sentinel)
			}
			if errors.Is(got, host.ErrSkillNotFound) {
				t.Errorf("%v matches another code's sentinel", got)
			}
		})
	}
	if client.FromGRPC(nil, metadata.Pairs(daemon.TrailerErrorCode, "x")) != nil {
		t.Error("FromGRPC(nil) is not nil")
	}
}
