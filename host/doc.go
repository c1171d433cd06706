// Package host is what a Go application imports to install and call
// Palyra-Go skills. It is pure Go: it never imports sidecar/internal/wasmrt or
// wasmtime-go; skills run in palyra-sidecar processes under a supervisor
// (host/supervisor).
//
//	h, err := host.Open(ctx, host.Config{StateDir: dir, SidecarPath: "/usr/libexec/palyra-sidecar"})
//	defer h.Close(ctx)
//	_, err = h.Install(ctx, host.InstallRequest{Artifact: artifactBytes, TrustedPublishers: keys})
//	res, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hi"}`)})
//
// # One service
//
// Every operator verb (install, list, info, verify, audit, enable, disable,
// quarantine, remove, reaudit, call, A2UI form submit, the tool catalog,
// hooks, sidecar states, skill metrics, events) is declared once, on
// [Service]. *Host implements it over a state directory; the daemon's Go
// client (host/daemon/client) implements it over a running palyra-host.
// The daemon's HTTP and gRPC APIs, its MCP endpoint and the palyra CLI are
// adapters over a Service, so code written against Service works the same
// locally and remotely, with the same error codes (internal/servicetest is
// the conformance suite both pass). Who acts travels in the context
// ([WithPrincipal]). Nothing exported reaches the installer, supervisor or
// inventory past the gate below; the one diagnostic that touches the
// supervisor directly ([Host.StopSidecar]) says so in its name and doc.
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
// A version taken out of service (disabled, quarantined or removed, by any
// path: an operator's verb, the anomaly policy, a re-audit, an apply, a
// cluster op) has its sidecars, serving and standby, stopped before the
// change's verb returns; the next enable starts them again on the first
// call.
//
// # Approvals
//
// After those checks, a call that needs a human's approval (its tool's
// risk.requires_approval or risk.default_sensitive, a capability class the
// profile's capabilities.require_approval names that the skill is granted,
// or a run hook asking for it) does not run: Call returns a result with
// Pending set and a *PendingError (errors.Is ErrApprovalPending), and the
// approval waits in the inventory. An operator decides it
// (DecideApproval); the same call with CallRequest.ApprovalID then runs
// once, with the input approved (sha256 of its canonical JSON), unless
// the approval was denied (ErrApprovalDenied), expired
// (Config.ApprovalTTL; ErrApprovalExpired), used (ErrApprovalUsed) or is
// for another input (ErrApprovalInputMismatch). Requests, decisions, uses
// and expiries are journaled with the principal. A hook's own call of its
// tool never waits for approval.
//
// # Capabilities
//
// Every capability operation of a guest (HTTP, secrets, storage, channels)
// is a call from its sidecar back to the host's broker (host/broker), which
// serves it on the trusted side. Before each call the host registers the
// invocation with the grants and limits it computed itself, and the broker
// judges each operation against that record, not against anything the
// sidecar says. The backends are the state dir's encrypted vault
// (host/vault; Config.Vault), the skills' key-value store (host/storage;
// Config.Storage), the channels the application registers on Channels()
// (host/channels), and the HTTP egress firewall (host/broker/egress;
// Config.Egress). A call that fails after the broker refused it something
// returns a *DeniedError (code capability_denied) naming the refusal.
// Stats and AllStats report per-skill counters: calls, errors by code,
// capability calls, denials by reason, egress and storage bytes. Sidecars
// inherit none of the application's environment beyond Go runtime settings,
// and hold no secret value, socket or host file.
//
// # go-plugin interop
//
// An application that already uses hashicorp/go-plugin can launch
// palyra-sidecar with its own goplugin.ClientConfig: package sidecar/sidecarplugin
// exports the handshake (sidecarplugin.Handshake), the plugin map
// (sidecarplugin.ClientPlugins(broker), dispensed under
// sidecarplugin.PluginName as a *sidecarplugin.Client) and the message caps.
// Use gRPC only (AllowedProtocols: ProtocolGRPC), AutoMTLS (or, as
// host/supervisor does, a fraction of its cost: Ed25519 keys pinned with
// sidecarplugin.PinnedConfig, ClientKeyEnv and KeyLineReader), and on the
// exec.Cmd set SysProcAttr{Pdeathsig: SIGKILL, Setpgid: true}, and keep
// every socket in a private directory you remove after Kill (host/supervisor
// uses UnixSocketConfig.TempDir with a RunnerFunc, the only way go-plugin
// also puts the supervisor's own GRPCBroker socket there). An application binary can also act as the sidecar
// itself by calling sidecar.Main (that package links wasmtime) and passing
// its own os.Executable() as Config.SidecarPath.
package host
