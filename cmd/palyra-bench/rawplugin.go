package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// rawClient is a running raw go-plugin baseline process: the plugin a Go
// developer would write with hashicorp/go-plugin alone, configured like our
// sidecars (gRPC only, AutoMTLS, sockets in a private directory), serving
// the same SidecarService with an Invoke that echoes its input.
type rawClient struct {
	pc      *goplugin.Client
	sidecar *sidecarplugin.Client
	sockDir string
}

// spawnRaw starts bin with a new private socket directory and dispenses its
// client: go-plugin's start up to the first usable connection, as the
// supervisor does for a sidecar.
func spawnRaw(ctx context.Context, bin string) (_ *rawClient, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sockDir, err := os.MkdirTemp("", "pbraw")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(sockDir)
		}
	}()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PLUGIN_UNIX_SOCKET_DIR="+sockDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	pc := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sidecarplugin.Handshake,
		Plugins:          sidecarplugin.ClientPlugins(nil),
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		Logger:           hclog.NewNullLogger(),
		SyncStdout:       io.Discard,
		SyncStderr:       io.Discard,
	})
	rpc, err := pc.Client()
	if err != nil {
		pc.Kill()
		return nil, fmt.Errorf("start raw go-plugin: %w", err)
	}
	raw, err := rpc.Dispense(sidecarplugin.PluginName)
	if err != nil {
		pc.Kill()
		return nil, fmt.Errorf("dispense raw go-plugin: %w", err)
	}
	return &rawClient{pc: pc, sidecar: raw.(*sidecarplugin.Client), sockDir: sockDir}, nil
}

// invoke makes one Invoke with scenario B's payload and checks the echo.
func (c *rawClient) invoke(ctx context.Context) error {
	resp, err := c.sidecar.Invoke(ctx, &sidecarv1.InvokeRequest{InvocationId: "x", SkillId: "raw", ToolId: "bench.trivial", Input: echoInput})
	if err != nil {
		return err
	}
	if string(resp.GetOutput()) != trivialOutput {
		return fmt.Errorf("raw plugin output %q", resp.GetOutput())
	}
	return nil
}

// pid is the plugin process's pid.
func (c *rawClient) pid() int { return c.pc.ReattachConfig().Pid }

// kill ends the plugin and removes its socket directory.
func (c *rawClient) kill() {
	c.pc.Kill()
	os.RemoveAll(c.sockDir)
}
