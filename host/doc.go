// Package host is what a Go application imports to install and call
// Palyra-Go skills. It is pure Go: it never imports sidecar/runtime or
// wasmtime-go; skills run in palyra-sidecar processes under a supervisor
// (host/supervisor).
//
//	h, err := host.Open(ctx, host.Config{StateDir: dir, SidecarPath: "/usr/libexec/palyra-sidecar"})
//	defer h.Close(ctx)
//	_, err = h.Install(ctx, artifactBytes, install.InstallOptions{TrustedPublishers: keys})
//	res, err := h.Call(ctx, "palyra.echo", "palyra.echo", json.RawMessage(`{"text":"hi"}`))
//
// # Checked at every call
//
// Call re-checks, before each call: the status row of the version that will
// run (skill_quarantined, skill_disabled, crashlooping, skill_not_found),
// the trust decision (the installed artifact is re-verified against the
// trust store without trust on first use; the verdict is cached by artifact
// sha256 and trust store mtime), the grants and limits (manifest ∩ policy,
// recomputed), and the input against the tool's input_schema. After the
// sidecar answers, the output is capped (Config.MaxOutputBytes) and
// validated against the output_schema (invalid_output): a compromised
// sidecar cannot hand back unchecked output. Every failure carries a stable
// code (errcode.Of).
//
// # go-plugin interop
//
// An application that already uses hashicorp/go-plugin can launch
// palyra-sidecar with its own goplugin.ClientConfig: package sidecar/plugin
// exports the handshake (sidecarplugin.Handshake), the plugin map
// (sidecarplugin.ClientPlugins(broker), dispensed under
// sidecarplugin.PluginName as a *sidecarplugin.Client) and the message caps.
// Use gRPC only (AllowedProtocols: ProtocolGRPC), AutoMTLS, and on the
// exec.Cmd set SysProcAttr{Pdeathsig: SIGKILL, Setpgid: true} and
// PLUGIN_UNIX_SOCKET_DIR to a private directory you remove after Kill, as
// host/supervisor does. An application binary can also act as the sidecar
// itself by calling sidecar.Main (that package links wasmtime) and passing
// its own os.Executable() as Config.SidecarPath.
package host
