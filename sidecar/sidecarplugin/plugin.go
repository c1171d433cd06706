package sidecarplugin

import (
	"context"
	"errors"
	"fmt"
	"sync"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// PluginName is the name under which the sidecar plugin is served and
// dispensed.
const PluginName = "sidecar"

// Handshake is the go-plugin handshake of a Palyra-Go sidecar. The magic
// cookie keeps the sidecar binary from being run by hand or by another
// go-plugin host by mistake; it is a UX feature, not a security feature.
// ProtocolVersion changes when the wire contract (palyra.sidecar.v1) changes
// incompatibly.
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "PALYRA_SIDECAR_PLUGIN",
	MagicCookieValue: "7c1f0e9a4b2d8356e0a1f4c9d2b7e85a3f6c0d1e9b4a7258",
}

// Message size caps. The sidecar runs untrusted code, so the supervisor caps
// what it accepts from it; the sidecar caps what it accepts in turn.
const (
	// MaxResponseBytes caps a message the supervisor receives from a
	// sidecar: an InvokeResponse holds at most 1 MiB of output and 64 KiB
	// of logs (sdk/ABI.md), so 8 MiB leaves ample room.
	MaxResponseBytes = 8 << 20
	// MaxRequestBytes caps a message the sidecar receives from the
	// supervisor, which may carry module bytes.
	MaxRequestBytes = 256 << 20
	// MaxCapabilityRequestBytes caps a CapabilityCallRequest the broker
	// receives (a 1 MiB request document plus its envelope).
	MaxCapabilityRequestBytes = (1 << 20) + (64 << 10)
	// MaxCapabilityResponseBytes caps a broker's response document
	// (sdk/ABI.md §5).
	MaxCapabilityResponseBytes = 4 << 20
)

// FlagNoMemoryPool turns the linear-memory pool off in the sidecar's
// serving and precompile modes (wasmrt's Config.NoMemoryPool). The
// supervisor passes it to both (supervisor.Config.NoMemoryPool), so that
// their cache entries match. It exists for before/after measurements.
const FlagNoMemoryPool = "no-memory-pool"

// Flow-control windows of the supervisor–sidecar connection, set on both
// ends (ServerOptions, DialOptions). A fixed window turns off gRPC's
// bandwidth-delay-product estimation, which sends the peer a PING (and gets
// its ack) on nearly every call when calls come one at a time: two more
// frames, writes and wake-ups per call on a local socket, where there is
// no bandwidth-delay product to learn. 1 MiB per stream holds any reply
// (MaxResponseBytes is a cap, not a size) with few window updates.
const (
	StreamWindowBytes = 1 << 20
	ConnWindowBytes   = 4 << 20
)

// Transport buffers of the supervisor–sidecar connections (the sidecar's
// service and the supervisor's broker), set on both ends. gRPC's defaults
// (32 KiB read and 32 KiB write per connection, the write buffer held for
// the connection's life) cost a supervisor of 50 running sidecars about
// 6 MiB of heap for messages that are nearly all under 1 KiB: the write
// buffer is taken from a shared pool for each flush and returned after
// it, and reads go through a 16 KiB buffer (a larger message is read in
// more calls, not refused).
const (
	ReadBufferBytes  = 16 << 10
	WriteBufferBytes = 16 << 10
)

// ServerOptions are the sidecar's gRPC server options for this connection.
func ServerOptions() []grpc.ServerOption {
	return append(transportServerOptions(), grpc.MaxRecvMsgSize(MaxRequestBytes))
}

// transportServerOptions are the flow-control windows and buffers of every
// server of this contract: the sidecar's SidecarService and the
// supervisor's capability broker.
func transportServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InitialWindowSize(StreamWindowBytes),
		grpc.InitialConnWindowSize(ConnWindowBytes),
		grpc.ReadBufferSize(ReadBufferBytes),
		grpc.WriteBufferSize(WriteBufferBytes),
		grpc.SharedWriteBuffer(true),
	}
}

// DialOptions are the supervisor's gRPC dial options for this connection;
// the sidecar dials the supervisor's broker with the same.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(StreamWindowBytes),
		grpc.WithInitialConnWindowSize(ConnWindowBytes),
		grpc.WithReadBufferSize(ReadBufferBytes),
		grpc.WithWriteBufferSize(WriteBufferBytes),
		grpc.WithSharedWriteBuffer(true),
	}
}

// ServerFactory makes the SidecarService implementation of a sidecar. dialer
// reaches the supervisor's Broker by the id given in LoadSkillRequest; the
// implementation must Close it when it stops.
type ServerFactory func(dialer *BrokerDialer) sidecarv1.SidecarServiceServer

// GRPCPlugin is the go-plugin plugin of the sidecar contract. The supervisor
// sets Broker (see ClientPlugins); the sidecar sets NewServer (see
// ServerPlugins). It is a value to configure, not to share between clients
// after use.
type GRPCPlugin struct {
	goplugin.NetRPCUnsupportedPlugin

	// Broker, on the supervisor side, serves the capability-calls of the
	// sidecar's guests. Nil makes every capability-call "unavailable".
	Broker Broker

	// NewServer, on the sidecar side, makes the service implementation.
	NewServer ServerFactory
}

// ClientPlugins returns the plugin set a supervisor passes to
// goplugin.ClientConfig.Plugins. broker may be nil.
func ClientPlugins(broker Broker) goplugin.PluginSet {
	return goplugin.PluginSet{PluginName: &GRPCPlugin{Broker: broker}}
}

// ServerPlugins returns the plugin set a sidecar passes to
// goplugin.ServeConfig.Plugins.
func ServerPlugins(newServer ServerFactory) goplugin.PluginSet {
	return goplugin.PluginSet{PluginName: &GRPCPlugin{NewServer: newServer}}
}

// GRPCServer implements goplugin.GRPCPlugin: it registers SidecarService on
// s. go-plugin calls it once, in the sidecar.
func (p *GRPCPlugin) GRPCServer(b *goplugin.GRPCBroker, s *grpc.Server) error {
	if p.NewServer == nil {
		return errors.New("sidecar plugin: no server factory")
	}
	sidecarv1.RegisterSidecarServiceServer(s, p.NewServer(&BrokerDialer{broker: b}))
	return nil
}

// GRPCClient implements goplugin.GRPCPlugin: it returns a *Client. When the
// plugin has a Broker, it is served on a GRPCBroker id of its own from the
// first LoadSkill for as long as the plugin client lives (go-plugin stops
// it on Kill).
func (p *GRPCPlugin) GRPCClient(_ context.Context, b *goplugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	c := &Client{rpc: sidecarv1.NewSidecarServiceClient(conn)}
	if p.Broker != nil {
		id := b.NextId()
		srv := NewBrokerServer(p.Broker)
		// The broker is announced at the sidecar's first LoadSkill, not
		// now: go-plugin keeps an announcement that no Dial took for 5 s
		// only, and a spare sidecar may wait longer than that for a skill.
		c.serveBroker = func() {
			go b.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
				opts = append(opts, transportServerOptions()...)
				opts = append(opts, grpc.MaxRecvMsgSize(MaxCapabilityRequestBytes))
				s := grpc.NewServer(opts...)
				sidecarv1.RegisterBrokerServiceServer(s, srv)
				return s
			})
		}
		c.brokerID = id
	}
	return c, nil
}

// BrokerDialer reaches the supervisor's BrokerService from the sidecar. It
// dials each GRPCBroker id once and keeps the connection: go-plugin's
// GRPCBroker consumes one announcement per Dial, so a second Dial of the same
// id would block. It is safe for concurrent use; Close ends every connection.
type BrokerDialer struct {
	broker *goplugin.GRPCBroker

	mu     sync.Mutex
	conns  map[uint32]*grpc.ClientConn
	closed bool
}

// Broker returns the Broker served on id, dialing it on first use.
func (d *BrokerDialer) Broker(id uint32) (Broker, error) {
	if id == 0 {
		return nil, errors.New("sidecar plugin: broker id 0")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errors.New("sidecar plugin: broker dialer closed")
	}
	conn, ok := d.conns[id]
	if !ok {
		if d.broker == nil {
			return nil, errors.New("sidecar plugin: no GRPCBroker")
		}
		var err error
		conn, err = d.broker.DialWithOptions(id, append(DialOptions(),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxCapabilityResponseBytes+(64<<10))))...)
		if err != nil {
			return nil, fmt.Errorf("sidecar plugin: dial broker %d: %w", id, err)
		}
		if d.conns == nil {
			d.conns = make(map[uint32]*grpc.ClientConn)
		}
		d.conns[id] = conn
	}
	return NewBrokerClient(conn), nil
}

// Close closes every broker connection. It is idempotent.
func (d *BrokerDialer) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	var errs []error
	for id, c := range d.conns {
		if err := c.Close(); err != nil {
			errs = append(errs, fmt.Errorf("sidecar plugin: close broker %d: %w", id, err))
		}
		delete(d.conns, id)
	}
	return errors.Join(errs...)
}

// Interface guards.
var (
	_ goplugin.GRPCPlugin = (*GRPCPlugin)(nil)
	_ goplugin.Plugin     = (*GRPCPlugin)(nil)
)
