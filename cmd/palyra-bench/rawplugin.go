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

	sidecarplugin "github.com/palyra-go/palyra/sidecar/plugin"
)

// rawClient is a running raw go-plugin baseline process: the plugin a Go
// developer would write with hashicorp/go-plugin alone, configured like our
// sidecars (gRPC only, AutoMTLS, sockets in a private directory), serving
// the same SidecarService with an Invoke that echoes its input.
type rawClient struct {
	pc      *goplugin.Client
	sidecar *sidecarplugin.Client
}

// spawnRaw starts bin and dispenses its client: go-plugin's start up to
// the first usable connection.
func spawnRaw(ctx context.Context, bin, sockDir string) (*rawClient, error) {
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
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
	return &rawClient{pc: pc, sidecar: raw.(*sidecarplugin.Client)}, nil
}

// pid is the plugin process's pid.
func (c *rawClient) pid() int { return c.pc.ReattachConfig().Pid }

func (c *rawClient) kill() { c.pc.Kill() }
