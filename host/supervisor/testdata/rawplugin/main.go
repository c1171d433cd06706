// Command rawplugin is the baseline of the supervisor's benchmarks: a
// minimal go-plugin gRPC plugin serving the same palyra.sidecar.v1
// SidecarService, whose Invoke echoes its input bytes as output (no
// WebAssembly). TestMain builds it.
package main

import (
	"context"
	"os"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

type raw struct {
	sidecarv1.UnimplementedSidecarServiceServer
}

func (raw) LoadSkill(context.Context, *sidecarv1.LoadSkillRequest) (*sidecarv1.LoadSkillResponse, error) {
	return &sidecarv1.LoadSkillResponse{}, nil
}

func (raw) Invoke(_ context.Context, req *sidecarv1.InvokeRequest) (*sidecarv1.InvokeResponse, error) {
	return &sidecarv1.InvokeResponse{Output: req.GetInput()}, nil
}

func (raw) Health(context.Context, *sidecarv1.HealthRequest) (*sidecarv1.HealthResponse, error) {
	return &sidecarv1.HealthResponse{}, nil
}

func main() {
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: sidecarplugin.Handshake,
		// Started by the supervisor (host tests' lying sidecar), it speaks
		// the supervisor's pinned TLS; started by a plain go-plugin client
		// (the benchmarks' baseline), go-plugin's AutoMTLS.
		TLSProvider: sidecarplugin.TLSProvider(os.Getenv(sidecarplugin.ClientKeyEnv), os.Stdout),
		Plugins: sidecarplugin.ServerPlugins(func(*sidecarplugin.BrokerDialer) sidecarv1.SidecarServiceServer {
			return raw{}
		}),
		GRPCServer: goplugin.DefaultGRPCServer,
		Logger:     hclog.NewNullLogger(),
	})
}
