// Package sidecarplugin is the supervisor's side of the sidecar contract, and the
// part of it both processes share: the go-plugin handshake, the GRPCPlugin
// that serves and dispenses palyra.sidecar.v1.SidecarService, the typed
// Client the supervisor calls a sidecar through, and the adapter that serves
// the supervisor's capability Broker to the sidecar over go-plugin's
// GRPCBroker.
//
// It is pure Go: it never imports sidecar/internal/wasmrt or wasmtime-go, so the
// supervisor and any Go application that embeds the host stay free of cgo.
// The sidecar process itself (package sidecar) plugs its runtime in through
// GRPCPlugin.NewServer.
//
// Import it under another name than go-plugin's own package:
//
//	import (
//		goplugin "github.com/hashicorp/go-plugin"
//		sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
//	)
//
// # Host side
//
//	client := goplugin.NewClient(&goplugin.ClientConfig{
//		HandshakeConfig:  sidecarplugin.Handshake,
//		Plugins:          sidecarplugin.ClientPlugins(myBroker),
//		Cmd:              cmd, // with Pdeathsig, Setpgid, PLUGIN_UNIX_SOCKET_DIR
//		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
//		AutoMTLS:         true,
//	})
//	defer client.Kill()
//	rpc, err := client.Client()
//	raw, err := rpc.Dispense(sidecarplugin.PluginName)
//	sc := raw.(*sidecarplugin.Client)
//	_, err = sc.LoadSkill(ctx, &sidecarv1.LoadSkillRequest{...})
//	res, err := sc.Invoke(ctx, &sidecarv1.InvokeRequest{...})
//
// AutoMTLS makes P-521 certificates on every start; host/supervisor instead
// sets ClientConfig.TLSConfig to PinnedConfig over a NewIdentity, passes
// the identity's key in ClientKeyEnv and reads the sidecar's own key from
// its stdout through a KeyLineReader (tls.go): the same mutual
// authentication for a fraction of the CPU.
//
// When ClientPlugins is given a Broker, the dispensed Client serves it on a
// GRPCBroker id of its own and fills LoadSkillRequest.broker_id with it; the
// sidecar dials that id once and sends every capability-call of its guests
// there.
//
// # Errors
//
// A failure the sidecar reports (a call outcome such as "fuel_exhausted", or a
// load failure such as "link_error") comes back as the response together with
// an *Error carrying its stable code. It unwraps to the one sentinel of that
// code (errcode.Lookup), so errors.Is(err, errcode.ErrTimeout) holds for a
// sidecar's timeout as for the supervisor's own; a code whose package is not
// linked (the runtime's, in the host) is read with errcode.Of. Transport
// failures (a sidecar that died) are gRPC status errors.
//
// # Concurrency
//
// Client, and the broker adapter, are safe for concurrent use.
package sidecarplugin
