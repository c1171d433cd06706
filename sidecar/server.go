package sidecar

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/palyra-go/palyra/host/errcode"
	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
	"github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// MaxModuleBytes caps the module a sidecar reads from module_path.
const MaxModuleBytes = 128 << 20

// Errors of the sidecar's own (the runtime's errors keep their codes).
var (
	// ErrModuleHashMismatch: the module bytes do not match module_sha256.
	ErrModuleHashMismatch = errcode.New("module_hash_mismatch", "module sha256 mismatch")
	// ErrInvalidRequest: a request is missing a field or has one out of range.
	ErrInvalidRequest = errcode.New("invalid_request", "invalid sidecar request")
	// ErrAlreadyLoaded: LoadSkill was called on a sidecar that has a skill.
	ErrAlreadyLoaded = errcode.New("skill_already_loaded", "a skill is already loaded")
	// ErrNotLoaded: Invoke named a skill the sidecar has not loaded.
	ErrNotLoaded = errcode.New("skill_not_loaded", "skill not loaded")
	// ErrUnknownTool: Invoke named a tool the skill does not declare. It is
	// the shared errcode.ErrUnknownTool, the one the host refuses with too.
	ErrUnknownTool = errcode.ErrUnknownTool
	// ErrStopping: the sidecar is stopping.
	ErrStopping = errcode.New("sidecar_stopping", "sidecar is stopping")
	// ErrBrokerUnavailable: the supervisor's broker could not be reached.
	ErrBrokerUnavailable = errcode.New("broker_unavailable", "capability broker unavailable")
	// ErrModuleRead: the module file could not be read.
	ErrModuleRead = errcode.New("module_read_failed", "module could not be read")
)

type state int32

const (
	stateNotLoaded state = iota
	stateLoading
	stateServing
	stateStopping
)

// skill is what LoadSkill set up.
type skill struct {
	req    *sidecarv1.LoadSkillRequest // module bytes dropped
	engine *wasmrt.Engine
	module *wasmrt.Module
	grants wasmrt.Grants
	// tools holds every tool the host named (none: any tool id).
	tools  map[string]struct{}
	broker wasmrt.Broker
}

// server implements SidecarService with a wasmrt.Engine. One per process.
type server struct {
	sidecarv1.UnimplementedSidecarServiceServer

	cfg     ServeConfig
	log     hclog.Logger
	dialer  *sidecarplugin.BrokerDialer
	stopped func() // ends the gRPC server once Stop has answered

	mu        sync.Mutex
	state     state
	skill     *skill
	hardening *sidecarv1.Hardening // cfg.hardening, then what LoadSkill added

	inFlight    atomic.Int32
	invocations atomic.Uint64
}

func newServer(cfg ServeConfig, log hclog.Logger, dialer *sidecarplugin.BrokerDialer, stopped func()) *server {
	return &server{cfg: cfg, log: log, dialer: dialer, stopped: stopped, hardening: cfg.hardening}
}

func fail(err error) (code, msg string) {
	return errcode.Of(err), utf8(err.Error())
}

func utf8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// LoadSkill implements SidecarService.
func (s *server) LoadSkill(_ context.Context, req *sidecarv1.LoadSkillRequest) (*sidecarv1.LoadSkillResponse, error) {
	start := time.Now()
	resp, err := s.loadSkill(req)
	if resp == nil {
		resp = &sidecarv1.LoadSkillResponse{}
	}
	resp.LoadTime = durationpb.New(time.Since(start))
	s.mu.Lock()
	resp.Hardening = s.hardening
	s.mu.Unlock()
	if resp.Hardening == nil {
		resp.Hardening = &sidecarv1.Hardening{}
	}
	log := s.log.With("skill_id", req.GetSkillId())
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = fail(err)
		log.Warn("load failed", "error_code", resp.ErrorCode, "error", err)
		return resp, nil
	}
	log.Info("skill loaded", "module_sha256", resp.ModuleSha256, "cache", resp.CacheStatus.String(),
		"load_time", time.Since(start))
	return resp, nil
}

func (s *server) loadSkill(req *sidecarv1.LoadSkillRequest) (*sidecarv1.LoadSkillResponse, error) {
	if req.GetSkillId() == "" {
		return nil, fmt.Errorf("%w: skill_id is empty", ErrInvalidRequest)
	}
	want := req.GetModuleSha256()
	if len(want) != sha256.Size*2 || strings.ToLower(want) != want {
		return nil, fmt.Errorf("%w: module_sha256 must be %d lower-case hex digits", ErrInvalidRequest, sha256.Size*2)
	}
	if _, err := hex.DecodeString(want); err != nil {
		return nil, fmt.Errorf("%w: module_sha256: %w", ErrInvalidRequest, err)
	}

	s.mu.Lock()
	switch s.state {
	case stateStopping:
		s.mu.Unlock()
		return nil, ErrStopping
	case stateLoading, stateServing:
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: %q", ErrAlreadyLoaded, s.skillID())
	}
	s.state = stateLoading
	s.mu.Unlock()

	sk, resp, err := s.build(req, want)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.state == stateLoading {
			s.state = stateNotLoaded
		}
		return nil, err
	}
	if s.state != stateLoading { // Stop came in meanwhile
		_ = sk.engine.Close()
		return nil, ErrStopping
	}
	s.skill = sk
	s.state = stateServing
	s.invocations.Store(0)
	return resp, nil
}

// skillID returns the loaded skill's id; s.mu is held.
func (s *server) skillID() string {
	if s.skill == nil {
		return ""
	}
	return s.skill.req.GetSkillId()
}

// build reads and verifies the module, compiles the schemas and loads the
// module into a new engine. It runs without s.mu.
func (s *server) build(req *sidecarv1.LoadSkillRequest, want string) (*skill, *sidecarv1.LoadSkillResponse, error) {
	if l := s.cfg.laterHarden; l != nil {
		// Before any module byte is read. A sidecar loads once (a failed
		// load ends it), so this runs once.
		hr, err := l.apply(req.GetModulePath(), req.GetCacheDir(), req.GetHardenMaxDataBytes())
		s.mu.Lock()
		s.hardening = hr
		s.mu.Unlock()
		if err != nil {
			return nil, nil, err
		}
	}
	// The module is read only when it is compiled: a verified cache entry
	// for its sha256 was compiled from bytes with that hash (a Go guest's
	// module is megabytes, read and hashed for nothing on a cache hit).
	var sum [sha256.Size]byte
	if _, err := hex.Decode(sum[:], []byte(want)); err != nil {
		return nil, nil, fmt.Errorf("%w: module_sha256: %w", ErrInvalidRequest, err)
	}
	read := func() ([]byte, error) {
		wasm, err := readModule(req)
		if err != nil {
			return nil, err
		}
		if got := sha256.Sum256(wasm); got != sum {
			return nil, fmt.Errorf("%w: got %s, want %s", ErrModuleHashMismatch, hex.EncodeToString(got[:]), want)
		}
		return wasm, nil
	}

	tools := make(map[string]struct{}, len(req.GetTools()))
	for _, t := range req.GetTools() {
		if t.GetId() == "" {
			return nil, nil, fmt.Errorf("%w: tool with empty id", ErrInvalidRequest)
		}
		if _, dup := tools[t.GetId()]; dup {
			return nil, nil, fmt.Errorf("%w: duplicate tool %q", ErrInvalidRequest, t.GetId())
		}
		// Schemas are checked on the trusted side (the host, or the
		// supervisor for a Target that carries them), never here: a
		// sidecar that was sent one refuses it rather than leave it
		// unchecked.
		if len(bytes.TrimSpace(t.GetInputSchema())) > 0 || len(bytes.TrimSpace(t.GetOutputSchema())) > 0 {
			return nil, nil, fmt.Errorf("%w: tool %q comes with JSON Schemas: the supervisor checks schemas, the sidecar does not", ErrInvalidRequest, t.GetId())
		}
		tools[t.GetId()] = struct{}{}
	}

	var broker wasmrt.Broker
	if id := req.GetBrokerId(); id != 0 {
		b, err := s.dialer.Broker(id)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBrokerUnavailable, err)
		}
		broker = brokerAdapter{b}
	}

	ecfg := s.cfg.Engine
	ecfg.CacheDir = req.GetCacheDir()
	size, err := moduleSize(req)
	if err != nil {
		return nil, nil, err
	}
	// As the precompile child did (wasmrt.Precompile), so that its cache
	// entry is this engine's.
	engine, err := wasmrt.NewEngine(ecfg.ForModule(size))
	if err != nil {
		return nil, nil, err
	}
	limits, err := limitsFromProto(req.GetLimits())
	if err != nil {
		_ = engine.Close()
		return nil, nil, err
	}
	mcfg := wasmrt.ModuleConfig{
		Entrypoint:        req.GetEntrypoint(),
		Limits:            limits,
		PreparedInstances: int(req.GetPreparedInstances()),
		InitFuel:          req.GetInitFuel(),
		InitTimeout:       req.GetInitTimeout().AsDuration(),
	}
	if req.GetPreparedInstances() > wasmrt.MaxPreparedInstances {
		_ = engine.Close()
		return nil, nil, fmt.Errorf("%w: prepared_instances %d over %d", ErrInvalidRequest,
			req.GetPreparedInstances(), wasmrt.MaxPreparedInstances)
	}
	module, err := engine.LoadSHA256(sum, read, mcfg)
	if err != nil {
		_ = engine.Close()
		return nil, nil, err
	}

	kept := proto.CloneOf(req)
	kept.Module = nil
	ci := module.Cache()
	resp := &sidecarv1.LoadSkillResponse{
		ModuleSha256: module.SHA256(),
		Entrypoint:   module.Entrypoint(),
		CacheStatus:  cacheStatusToProto(ci.Status),
		CacheHit:     ci.Status == wasmrt.CacheHit,
		CachePath:    ci.Path,
	}
	if ci.WriteErr != nil {
		s.log.Warn("cache write failed", "skill_id", req.GetSkillId(), "error", ci.WriteErr)
	}
	return &skill{
		req:    kept,
		engine: engine,
		module: module,
		grants: grantsFromProto(req.GetGrants()),
		tools:  tools,
		broker: broker,
	}, resp, nil
}

// moduleSource is where req's module is: its bytes, or else a file path.
func moduleSource(req *sidecarv1.LoadSkillRequest) (inline []byte, path string, err error) {
	switch m := req.GetModule().(type) {
	case *sidecarv1.LoadSkillRequest_ModuleBytes:
		return m.ModuleBytes, "", nil
	case *sidecarv1.LoadSkillRequest_ModulePath:
		if m.ModulePath == "" {
			return nil, "", fmt.Errorf("%w: module_path is empty", ErrInvalidRequest)
		}
		return nil, m.ModulePath, nil
	default:
		return nil, "", fmt.Errorf("%w: neither module_path nor module_bytes is set", ErrInvalidRequest)
	}
}

// readModule returns the module bytes of req, reading module_path when set.
func readModule(req *sidecarv1.LoadSkillRequest) ([]byte, error) {
	inline, path, err := moduleSource(req)
	if err != nil || path == "" {
		return inline, err
	}
	return readModuleFile(path)
}

// moduleSize is the size of req's module, which chooses its engine's
// memory settings (wasmrt.Config.ForModule), without reading the module:
// a verified cache entry is loaded without it.
func moduleSize(req *sidecarv1.LoadSkillRequest) (int64, error) {
	inline, path, err := moduleSource(req)
	if err != nil || path == "" {
		return int64(len(inline)), err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrModuleRead, err)
	}
	return fi.Size(), nil
}

// Invoke implements SidecarService.
func (s *server) Invoke(ctx context.Context, req *sidecarv1.InvokeRequest) (*sidecarv1.InvokeResponse, error) {
	resp, _ := s.invoke(ctx, req, false)
	return resp, nil
}

// invoke runs one call, whether it came as an Invoke or on a Calls stream,
// and returns its reply (an outcome other than success is in the reply).
// With deferRefill, the module's preparer is not woken by the call: the
// module is returned (nil when no call ran) and the caller calls its
// Refill once the reply is sent (wasmrt.Invocation.DeferRefill).
func (s *server) invoke(ctx context.Context, req *sidecarv1.InvokeRequest, deferRefill bool) (*sidecarv1.InvokeResponse, *wasmrt.Module) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)

	resp := &sidecarv1.InvokeResponse{Stats: &sidecarv1.Stats{}}
	sk, err := s.serving(req.GetSkillId())
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = fail(err)
		return resp, nil
	}

	inv := wasmrt.Invocation{
		ID:      req.GetInvocationId(),
		SkillID: req.GetSkillId(),
		ToolID:  req.GetToolId(),
		Input:   req.GetInput(),
		Config:  req.GetConfig(),
		Grants:  sk.grants,
		Timeout: req.GetTimeout().AsDuration(),
		Broker:  sk.broker,

		DeferRefill: deferRefill,
	}
	if len(sk.tools) > 0 {
		if _, ok := sk.tools[req.GetToolId()]; !ok {
			resp.ErrorCode, resp.ErrorMessage = fail(fmt.Errorf("%w: %q", ErrUnknownTool, req.GetToolId()))
			return resp, nil
		}
	}
	if req.GetGrants() != nil {
		inv.Grants = grantsFromProto(req.GetGrants())
	}
	if inv.Limits, err = limitsFromProto(req.GetLimits()); err != nil {
		resp.ErrorCode, resp.ErrorMessage = fail(err)
		return resp, nil
	}

	s.invocations.Add(1)
	res, err := sk.module.Invoke(ctx, inv)
	resultToProto(res, resp)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = fail(err)
		var te *wasmrt.ToolError
		if errors.As(err, &te) {
			resp.ToolError = &sidecarv1.ToolError{Code: utf8(te.Code), Message: utf8(te.Message)}
		}
		var tr *wasmrt.TrapError
		if errors.As(err, &tr) {
			resp.TrapCode = tr.Code
		}
	}
	// Never the input or output: they may carry user data.
	if s.log.IsDebug() {
		s.log.Debug("invoke", "skill_id", req.GetSkillId(), "tool_id", req.GetToolId(), "invocation_id", req.GetInvocationId(),
			"error_code", resp.ErrorCode, "wall_time", res.Stats.WallTime,
			"fuel", res.Stats.FuelConsumed, "capability_calls", res.Stats.CapabilityCalls)
	}
	if !deferRefill {
		return resp, nil
	}
	return resp, sk.module
}

// serving returns the loaded skill when it is skillID and calls are served.
func (s *server) serving(skillID string) (*skill, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state == stateStopping:
		return nil, ErrStopping
	case s.state != stateServing:
		return nil, fmt.Errorf("%w: no skill loaded", ErrNotLoaded)
	case s.skill.req.GetSkillId() != skillID:
		return nil, fmt.Errorf("%w: %q (loaded: %q)", ErrNotLoaded, skillID, s.skill.req.GetSkillId())
	}
	return s.skill, nil
}

func (s *server) status() (sidecarv1.ServingStatus, *skill) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.state {
	case stateServing:
		return sidecarv1.ServingStatus_SERVING_STATUS_SERVING, s.skill
	case stateStopping:
		return sidecarv1.ServingStatus_SERVING_STATUS_STOPPING, nil
	default:
		return sidecarv1.ServingStatus_SERVING_STATUS_NOT_LOADED, nil
	}
}

// Health implements SidecarService.
func (s *server) Health(context.Context, *sidecarv1.HealthRequest) (*sidecarv1.HealthResponse, error) {
	st, sk := s.status()
	resp := &sidecarv1.HealthResponse{
		Status:      st,
		InFlight:    uint32(max(s.inFlight.Load(), 0)),
		Invocations: s.invocations.Load(),
	}
	if sk != nil {
		resp.SkillId = sk.req.GetSkillId()
		resp.ReadyInstances = uint32(sk.module.ReadyInstances())
	}
	return resp, nil
}

// Describe implements SidecarService.
func (s *server) Describe(context.Context, *sidecarv1.DescribeRequest) (*sidecarv1.DescribeResponse, error) {
	st, sk := s.status()
	resp := &sidecarv1.DescribeResponse{
		AbiVersion: wasmrt.ABIVersion,
		Pid:        int32(os.Getpid()),
		GoVersion:  goruntime.Version(),
		Status:     st,
	}
	if sk != nil {
		resp.EngineFingerprint = sk.engine.Fingerprint()
		resp.SkillId = sk.req.GetSkillId()
		resp.SkillVersion = sk.req.GetSkillVersion()
		resp.ModuleSha256 = sk.module.SHA256()
		resp.Entrypoint = sk.module.Entrypoint()
		resp.CacheStatus = cacheStatusToProto(sk.module.Cache().Status)
		resp.PreparedInstances = sk.req.GetPreparedInstances()
		resp.Limits = sk.req.GetLimits()
		resp.Grants = sk.req.GetGrants()
		for _, t := range sk.req.GetTools() {
			resp.ToolIds = append(resp.ToolIds, t.GetId())
		}
	}
	return resp, nil
}

// Stop implements SidecarService: it closes the module and engine (waiting
// for in-flight calls), answers, and has the gRPC server stop once the
// answer is out, which ends the process.
func (s *server) Stop(context.Context, *sidecarv1.StopRequest) (*sidecarv1.StopResponse, error) {
	s.log.Info("stop requested", "skill_id", s.closeAll())
	if s.cfg.OnStop != nil {
		s.cfg.OnStop()
	}
	s.stopped()
	return &sidecarv1.StopResponse{}, nil
}

// closeAll moves to stopping and closes the skill and the broker
// connections. It is idempotent and returns the skill id it closed.
func (s *server) closeAll() string {
	s.mu.Lock()
	s.state = stateStopping
	sk := s.skill
	s.skill = nil
	s.mu.Unlock()
	id := ""
	if sk != nil {
		id = sk.req.GetSkillId()
		_ = sk.engine.Close() // closes the module too; waits for in-flight calls
	}
	if err := s.dialer.Close(); err != nil {
		s.log.Warn("closing broker connections", "error", err)
	}
	return id
}

// brokerAdapter is a wasmrt.Broker over a sidecarplugin.Broker, mapping
// capability errors both ways.
type brokerAdapter struct{ b sidecarplugin.Broker }

func (a brokerAdapter) Call(ctx context.Context, req wasmrt.CapabilityRequest) ([]byte, error) {
	resp, err := a.b.Call(ctx, sidecarplugin.CapabilityRequest{
		InvocationID: req.InvocationID,
		SkillID:      req.SkillID,
		ToolID:       req.ToolID,
		Kind:         sidecarplugin.CapabilityKind(req.Kind),
		Handle:       req.Handle,
		Grant:        req.Grant,
		Request:      req.Request,
	})
	var ce *sidecarplugin.CapabilityError
	if errors.As(err, &ce) {
		return nil, &wasmrt.CapabilityError{Code: wasmrt.ABICode(ce.Code), Message: ce.Message}
	}
	return resp, err
}

// serverOptions are the options of the sidecar's gRPC server.
func serverOptions() []grpc.ServerOption {
	return sidecarplugin.ServerOptions()
}
