package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/a2ui"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/broker"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/supervisor"
)

// Inline runs (RunInline) are the author's loop: a module fresh from the
// compiler, with no artifact, signature, trust store or audit behind it,
// run in a real sidecar under exactly the checks an installed skill's
// calls pass. They are the operator's choice: policy.toml [dev]
// allow_inline = true, off by default and never on a hardened host.

// ErrInlineNotAllowed is an inline run on a host whose operator profile
// does not set [dev] allow_inline = true (policy.ErrInlineNotAllowed).
var ErrInlineNotAllowed = policy.ErrInlineNotAllowed

// ErrInlineNeedsApproval is an inline run of a tool that needs a human's
// approval (its risk flags, a capability class the profile marks
// require_approval). An approval is bound to an installed version, and an
// inline module is none, so the run is refused, as Palyra refuses inline
// code that no approval channel can approve.
var ErrInlineNeedsApproval = errcode.New("inline_needs_approval", "the inline tool needs approval, which an inline run cannot wait for")

// InlineSkillPrefix starts the skill id an inline run's sidecar, broker
// invocation and storage key space use: "dev:" and the manifest's skill
// id. An inline run never reads or writes an installed skill's storage,
// and never passes for an installed skill in the supervisor's view.
const InlineSkillPrefix = "dev:"

// InlineVersionPrefix starts the version an inline run reports:
// "inline-" and the first 12 hex digits of the module's sha256, so every
// rebuild is a version of its own.
const InlineVersionPrefix = "inline-"

// MaxInlineModuleBytes caps an inline module: the cap on one module of an
// artifact (artifact.MaxEntryBytes). A larger one is refused with
// artifact.ErrEntryTooLarge (artifact_entry_too_large), as a build of the
// same module would be.
const MaxInlineModuleBytes = artifact.MaxEntryBytes

// InlineRunRequest is an inline run: a WebAssembly module that is not
// packaged, signed or installed, the skill.toml it runs under, and the
// call.
type InlineRunRequest struct {
	// Module is the module's bytes (a .wasm; at most
	// MaxInlineModuleBytes).
	Module []byte `json:"module"`
	// ModuleName names the module in messages ("wordcount.wasm");
	// optional.
	ModuleName string `json:"module_name,omitempty"`
	// Manifest is the skill.toml the module runs under: its tools and
	// their schemas, its capabilities and its quotas, judged by the
	// operator profile as at install. Empty: InlineManifest(ToolID), one
	// tool with no schemas, no capabilities and the default quotas.
	Manifest string `json:"manifest,omitempty"`
	// ToolID is the tool called.
	ToolID string `json:"tool_id"`
	// Input is the tool's input (JSON; empty is null).
	Input json.RawMessage `json:"input,omitempty"`
	// Timeout, when positive, bounds the call (at most MaxCallTimeout);
	// the manifest's and the policy's limits apply either way.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// InlineManifest is the manifest of a module run without one, for tool
// toolID, "<publisher>.<name>" (a tool id starts with its publisher's
// prefix): skill <publisher>.inline, version 0.0.0, publisher <publisher>,
// the one tool toolID with empty input and output schemas (any JSON), no
// capabilities (every capability call is refused as not granted) and the
// manifest's default quotas (manifest.DefaultFuelBudget,
// DefaultMaxMemoryBytes, DefaultWallClockTimeoutMS), capped by the
// profile. A tool id with no '.' is ErrBadRequest.
func InlineManifest(toolID string) (string, error) {
	toolID = strings.TrimSpace(toolID)
	publisher, _, ok := strings.Cut(toolID, ".")
	if !ok || publisher == "" {
		return "", fmt.Errorf("%w: without a skill.toml the tool id is <publisher>.<name> (dev.%s, say), not %q", ErrBadRequest, toolID, toolID)
	}
	q := strconv.Quote(toolID)
	return `manifest_version = 2
skill_id = ` + strconv.Quote(publisher+".inline") + `
name = "Inline module"
version = "0.0.0"
publisher = ` + strconv.Quote(publisher) + `

[[entrypoints.tools]]
id = ` + q + `
name = ` + q + `
description = "The tool of an inline module run without a skill.toml."
input_schema = {}
output_schema = {}

[compat]
required_protocol_major = 1
min_palyra_version = "0.1.0"
`, nil
}

// wasmMagic starts every WebAssembly binary module.
var wasmMagic = []byte("\x00asm")

// inlineRun is what RunInline checked before the sidecar.
type inlineRun struct {
	t     supervisor.Target
	dec   *policy.Decision
	sch   *manifest.ToolSchemas
	input json.RawMessage
	// palyraABI is the module's (palyraabi.go).
	palyraABI bool
}

// RunInline implements Service. It refuses with ErrInlineNotAllowed
// unless the profile sets [dev] allow_inline = true, then checks what Call
// checks of an installed skill, on the manifest given (or InlineManifest):
// the manifest parses and is compatible, the profile allows what it asks
// for (policy_violation otherwise), the tool exists, the input fits its
// schema; the grants and limits are manifest ∩ profile; the output is
// capped and checked against the output schema, and an A2UI document in
// it is validated (not kept: a form on it cannot be submitted, as no
// installed skill stands behind it). Nothing is installed, nothing enters
// the inventory or the call metrics, and no hook fires.
//
// The sidecar runs as skill InlineSkillPrefix+<skill_id>, version
// InlineVersionPrefix+<sha256 prefix>, and stays up after the call like an
// installed skill's: a rerun of the same module reuses it, and the idle
// timeout stops it. An inline run of another module under the same skill
// id (a rebuild) stops the previous module's sidecar at once. The module
// is written to a private directory of the host, removed at Close.
func (h *Host) RunInline(ctx context.Context, req InlineRunRequest) (*CallResult, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if err := h.in.Policy().InlineNotAllowed(); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if h.sup == nil {
		return nil, fmt.Errorf("host: %w: Config.SidecarPath is empty", supervisor.ErrSidecarNotFound)
	}
	if req.Timeout < 0 || req.Timeout > MaxCallTimeout {
		return nil, fmt.Errorf("%w: timeout %s is outside 0..%s", ErrBadRequest, req.Timeout, MaxCallTimeout)
	}
	p, err := h.checkInline(req)
	if err != nil {
		return nil, err
	}
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	if err := h.placeInline(ctx, &p.t, req.Module); err != nil {
		return nil, err
	}
	t, toolID := p.t, strings.TrimSpace(req.ToolID)
	inv := broker.Invocation{ID: supervisor.NewInvocationID(), SkillID: t.SkillID, Version: t.Version, ToolID: toolID, Grants: p.dec.Grants, Limits: p.dec.Limits}
	end := h.broker.Begin(inv)
	res, err := h.sup.Call(ctx, t, toolID, p.input, supervisor.CallOptions{InvocationID: inv.ID})
	usage := end()
	if err == nil {
		err = h.checkCallOutput(res, toolID, p.sch, p.palyraABI)
	} else if len(usage.Denials) > 0 {
		err = &DeniedError{SkillID: t.SkillID, Version: t.Version, ToolID: toolID, Denial: usage.Denials[0], Cause: err}
	} else {
		err = fmt.Errorf("host: inline %s tool %s: %w", t.SkillID, toolID, err)
	}
	if res == nil {
		return nil, err
	}
	out := &CallResult{
		InvocationID: res.InvocationID, SkillID: t.SkillID, Version: t.Version, ToolID: toolID,
		Output: res.Output, ExitCode: res.ExitCode, Stats: res.Stats, Logs: res.Logs, LogsDropped: res.LogsDropped,
		ToolError: res.ToolError, TrapCode: res.TrapCode, SidecarPID: res.PID,
	}
	if err == nil {
		if _, aerr := a2ui.ReadResult(out.Output, nil); aerr != nil {
			out.Output = nil
			err = fmt.Errorf("tool %s of %s returned A2UI the host refuses: %w", toolID, t.SkillID, aerr)
		}
	}
	if err != nil {
		return out, &CallError{Err: err, Result: out}
	}
	return out, nil
}

// checkInline runs RunInline's checks before the sidecar and returns the
// target (its ModulePath not yet set).
func (h *Host) checkInline(req InlineRunRequest) (*inlineRun, error) {
	toolID := strings.TrimSpace(req.ToolID)
	if toolID == "" {
		return nil, fmt.Errorf("%w: tool_id is required", ErrBadRequest)
	}
	name := req.ModuleName
	if name == "" {
		name = "module.wasm"
	}
	switch {
	case len(req.Module) > MaxInlineModuleBytes:
		return nil, &artifact.Error{Err: artifact.ErrEntryTooLarge, Path: "modules/" + filepath.Base(name), Limit: MaxInlineModuleBytes, Actual: int64(len(req.Module))}
	case len(req.Module) == 0:
		return nil, fmt.Errorf("%w: the module %s is empty", ErrBadRequest, name)
	case !bytes.HasPrefix(req.Module, wasmMagic):
		return nil, fmt.Errorf("%w: %s is not a WebAssembly binary module (a .wat is compiled with wat2wasm first)", ErrBadRequest, name)
	}
	if len(req.Input) > MaxInputBytes {
		return nil, fmt.Errorf("host: %w: the input of inline tool %s is %d bytes, over the %d-byte limit", ErrInputTooLarge, toolID, len(req.Input), MaxInputBytes)
	}
	input := req.Input
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("null")
	}
	src := req.Manifest
	if strings.TrimSpace(src) == "" {
		var err error
		if src, err = InlineManifest(toolID); err != nil {
			return nil, err
		}
	}
	m, err := manifest.Parse([]byte(src))
	if err != nil {
		return nil, fmt.Errorf("host: inline manifest: %w", err)
	}
	if err := manifest.CheckCompat(m); err != nil {
		return nil, fmt.Errorf("host: inline manifest: %w", err)
	}
	dec, err := h.in.Policy().Evaluate(m)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if !dec.Allowed() {
		return nil, fmt.Errorf("host: inline %s: %w", m.SkillID, dec.Err())
	}
	sch, err := m.ToolSchemas(toolID)
	if err != nil {
		return nil, fmt.Errorf("host: %w: inline %s has no tool %q", ErrUnknownTool, m.SkillID, toolID)
	}
	if err := sch.ValidateInputJSON(input); err != nil {
		return nil, fmt.Errorf("host: %w: %s: %v", ErrInvalidInput, toolID, err)
	}
	if reasons := h.approvalReasons(&checked{m: m, dec: dec}, toolID); len(reasons) > 0 {
		return nil, fmt.Errorf("host: %w: inline %s tool %s (%s): install the skill to call it through an approval, or run it under a manifest and profile that need none", ErrInlineNeedsApproval, m.SkillID, toolID, ReasonsText(reasons))
	}
	sum := sha256.Sum256(req.Module)
	sha := hex.EncodeToString(sum[:])
	v := &verified{manifest: m}
	for _, tl := range m.Entrypoints.Tools {
		v.tools = append(v.tools, supervisor.Tool{ID: strings.TrimSpace(tl.ID)})
	}
	if pl := m.Operator.Plugin; pl != nil {
		v.entrypoint = pl.DefaultEntrypoint
	}
	v.sha = sha
	// The module path is set when the module is written (placeInline).
	t := targetFor(InlineSkillPrefix+strings.ToLower(strings.TrimSpace(m.SkillID)), InlineVersionPrefix+sha[:12], "", v, dec)
	return &inlineRun{t: t, dec: dec, sch: sch, input: input, palyraABI: isPalyraABI(req.Module)}, nil
}

// placeInline writes the module of t to the host's inline directory (once
// per sha256) and sets t.ModulePath; a module run before under the same
// skill id and another sha256 has its sidecar stopped and its file
// removed: the last module run wins.
func (h *Host) placeInline(ctx context.Context, t *supervisor.Target, module []byte) error {
	h.inlineMu.Lock()
	defer h.inlineMu.Unlock()
	if h.inlineDir == "" {
		base := h.cfg.Supervisor.SocketDir
		if h.runDir != nil {
			base = h.runDir.Dir()
		}
		dir, err := os.MkdirTemp(base, "inline-")
		if err != nil {
			return fmt.Errorf("host: inline module directory: %w", err)
		}
		h.inlineDir = dir
	}
	path := filepath.Join(h.inlineDir, t.ModuleSHA256+".wasm")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		tmp, err := os.CreateTemp(h.inlineDir, ".module-")
		if err == nil {
			_, err = tmp.Write(module)
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Rename(tmp.Name(), path)
			}
			if err != nil {
				os.Remove(tmp.Name())
			}
		}
		if err != nil {
			return fmt.Errorf("host: writing the inline module: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("host: inline module: %w", err)
	}
	t.ModulePath = path
	if h.inline == nil {
		h.inline = map[string]inlineLoaded{}
	}
	prev, ok := h.inline[t.SkillID]
	h.inline[t.SkillID] = inlineLoaded{version: t.Version, path: path}
	if ok && prev.version != t.Version {
		h.sup.Stop(context.WithoutCancel(ctx), t.SkillID, prev.version)
		if err := os.Remove(prev.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			h.log.Warn("removing a replaced inline module failed", "path", prev.path, "error", err)
		}
		h.log.Debug("inline module replaced", "skill_id", t.SkillID, "old", prev.version, "new", t.Version)
	}
	return nil
}

// inlineLoaded is the module last run under an inline skill id.
type inlineLoaded struct {
	version, path string
}

// closeInline removes the inline modules' directory (after the sidecars
// stopped).
func (h *Host) closeInline() error {
	h.inlineMu.Lock()
	defer h.inlineMu.Unlock()
	if h.inlineDir == "" {
		return nil
	}
	err := os.RemoveAll(h.inlineDir)
	h.inlineDir, h.inline = "", nil
	if err != nil {
		return fmt.Errorf("host: removing the inline modules: %w", err)
	}
	return nil
}
