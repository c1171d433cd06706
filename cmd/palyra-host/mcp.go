package main

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/mcpserver"
)

// mcpCloseTimeout bounds stopping the sidecars after the session ended.
const mcpCloseTimeout = 30 * time.Second

// mcpCommand is `palyra-host mcp`: the state directory's active skills as
// MCP tools over stdio, for clients that launch it. It speaks MCP on stdin
// and stdout only; every log line goes to stderr.
func mcpCommand(stateDir *string, stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var hf hostFlags
	var fallback string
	c := &cobra.Command{
		Use:   "mcp [--policy FILE] [--sidecar PATH] [--approval-without-elicitation deny|allow]",
		Short: "Serve the state directory's active skills as MCP tools over stdio",
		Long: "mcp speaks the Model Context Protocol on stdin and stdout (newline-delimited JSON-RPC) for an MCP client that launches it, " +
			"and logs to stderr only. It opens the state directory itself, as serve does (a running daemon serves the same tools over HTTP at /mcp): " +
			"tools/list lists every tool of every active skill, and the list follows installs, quarantines, enables, disables and removals made by any process. " +
			"Tools whose manifest sets risk.requires_approval or risk.default_sensitive ask for approval by elicitation; a client without elicitation is refused (approval_required) unless --approval-without-elicitation allow. " +
			"It exits 0 when stdin ends or on SIGTERM/SIGINT, with every sidecar stopped. See host/mcpserver for the naming and mapping rules.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fb, err := mcpserver.ParseFallback(fallback)
			if err != nil {
				return err
			}
			hs, err := hf.resolve(*stateDir, stderr)
			if err != nil {
				return err
			}
			state, log := hs.state, hs.log
			ctx := cmd.Context()
			bus := &events.Bus{}
			h, err := host.Open(ctx, host.Config{
				StateDir: state, PolicyPath: hf.policyPath, SidecarPath: hs.sidecar, Logger: log, Bus: bus,
				TrustStore: hs.trustStore, VaultKey: hs.vaultKey, VaultKeyCommand: hs.vaultKeyCommand,
				Supervisor: hs.sup, Sources: hs.sources,
			})
			if err != nil {
				return err
			}
			srv, err := mcpserver.New(mcpserver.Options{
				Service: h, Wake: bus, ApprovalWithoutElicitation: fb, Logger: log,
			})
			if err != nil {
				return errors.Join(err, h.Close(context.Background()))
			}
			log.Info("palyra-host mcp serving on stdio", "state_dir", state)
			// stdin's end is the client's end of the session (MCP's stdio
			// shutdown): calls still running are cancelled at once.
			sctx, stop := context.WithCancel(ctx)
			defer stop()
			in := &endReader{r: stdin, end: func() { log.Debug("stdin closed: ending the session"); stop() }}
			serr := srv.Serve(sctx, &mcp.IOTransport{Reader: in, Writer: nopWriteCloser{stdout}})
			cctx, cancel := context.WithTimeout(context.Background(), mcpCloseTimeout)
			defer cancel()
			cerr := h.Close(cctx)
			log.Info("palyra-host mcp stopped")
			return errors.Join(serr, cerr)
		},
	}
	f := c.Flags()
	hf.register(f)
	f.StringVar(&fallback, "approval-without-elicitation", string(mcpserver.FallbackDeny), "a tool that needs approval, called by a client without elicitation: deny (refuse with approval_required) or allow")
	return c
}

// endReader reads r and calls end once when r ends (EOF or an error).
// Closing it does not close r.
type endReader struct {
	r    io.Reader
	once sync.Once
	end  func()
}

func (e *endReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.once.Do(e.end)
	}
	return n, err
}

func (e *endReader) Close() error { return nil }

// nopWriteCloser keeps the transport from closing stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
