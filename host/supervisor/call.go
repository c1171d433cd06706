package supervisor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/palyra-go/palyra/host/errcode"
	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// Call runs tool toolID of the target with input (one JSON value), starting
// the target's sidecar if none runs. The effective wall-clock budget is the
// smallest of t.Limits.Timeout and ctx's deadline, or Config.DefaultTimeout
// when neither is set; ctx also bounds the wait for a place and for the
// sidecar's start. On a failure the sidecar reported, the Result comes back
// with the error. opts may be the zero value.
func (s *Supervisor) Call(ctx context.Context, t Target, toolID string, input []byte, opts CallOptions) (*Result, error) {
	if opts.InvocationID == "" {
		opts.InvocationID = NewInvocationID()
	}
	if !t.valid() {
		return nil, fmt.Errorf("%w: skill id, module path and module sha256 are required", ErrInvalidTarget)
	}
	v, err := s.schemas.validator(&t, toolID)
	if err != nil {
		return nil, err
	}
	if err := checkInput(v, toolID, input); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.calls.Done()
	sl, release, err := s.admit(ctx, &t)
	if err != nil {
		return nil, err
	}
	defer release()

	budget := t.Limits.Timeout
	if dl, ok := ctx.Deadline(); ok {
		if d := time.Until(dl); budget <= 0 || d < budget {
			budget = d
		}
		if budget <= 0 {
			return nil, fmt.Errorf("%w: no time left for skill %s version %s: %w", ErrTimeout, t.SkillID, t.Version, context.DeadlineExceeded)
		}
	}
	if budget <= 0 {
		budget = s.cfg.DefaultTimeout
	}
	for attempt := 0; ; attempt++ {
		p, err := s.acquire(ctx, sl, &t)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctxError(ctx, fmt.Sprintf("starting the sidecar of skill %s version %s", t.SkillID, t.Version), err)
			}
			return nil, err
		}
		res, err := s.invoke(ctx, sl, p, &t, toolID, input, budget, opts)
		if err == nil {
			err = checkOutput(v, toolID, res)
		}
		// A sidecar being stopped (idle, retired, Close) refuses new
		// calls before running them: run the call in a fresh one, once.
		if err != nil && errcode.Of(err) == codeSidecarStopping {
			if s.isClosed() {
				return nil, fmt.Errorf("%w: call of skill %s version %s refused by a stopping sidecar", ErrClosed, t.SkillID, t.Version)
			}
			if attempt == 0 {
				continue
			}
		}
		return res, err
	}
}

// codeSidecarStopping is the sidecar's refusal of a call that arrives after
// Stop: the call did not run.
const codeSidecarStopping = "sidecar_stopping"

// invoke runs one call in p and judges its outcome: a sidecar that missed
// budget + CallGrace is killed (ErrTimeout), one whose transport failed
// has crashed (ErrSidecarCrashed).
func (s *Supervisor) invoke(ctx context.Context, sl *slot, p *proc, t *Target, toolID string, input []byte, budget time.Duration, opts CallOptions) (_ *Result, err error) {
	id := opts.InvocationID
	// The sidecar was loaded with t's limits (they are part of its load
	// key) and with the grants of its first target: a call sends its
	// grants only when the policy changed them since, and no limits.
	req := &sidecarv1.InvokeRequest{
		InvocationId: id,
		SkillId:      t.SkillID,
		ToolId:       toolID,
		Input:        input,
		Timeout:      durationpb.New(budget + s.cfg.sidecarTimeoutExtra),
		Config:       opts.Config,
	}
	if !t.Grants.equal(&p.grants) {
		req.Grants = grantsProto(t.Grants)
	}
	// The sidecar enforces the budget itself (req.Timeout); the supervisor
	// watches budget + grace with a timer of its own. That deadline is not
	// sent over gRPC (it would end the sidecar's call at the very moment the
	// supervisor decides, making "answered late" and "never answered" a
	// race): the RPC is cancelled by the timer or by the caller's ctx.
	rpcCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var expired atomic.Bool
	timer := time.AfterFunc(budget+s.cfg.CallGrace, func() {
		expired.Store(true)
		cancel()
	})
	defer timer.Stop()
	stopCtx := context.AfterFunc(ctx, cancel)
	defer stopCtx()
	var resp *sidecarv1.InvokeResponse
	if s.cfg.UnaryCalls {
		resp, err = p.client.Invoke(rpcCtx, req)
	} else {
		resp, err = p.client.Call(rpcCtx, req)
	}
	res, err := readReply(req.InvocationId, resp, err)
	if res != nil {
		res.SkillID, res.Version, res.PID = t.SkillID, t.Version, p.pid
	}
	var se *sidecarplugin.Error
	if err == nil || errors.As(err, &se) || res != nil {
		// Success, or an outcome the sidecar reported (in a reply the
		// supervisor may have refused): the sidecar answered.
		s.mu.Lock()
		sl.consecutive = 0
		s.mu.Unlock()
		return res, err
	}
	// A transport failure.
	if ctx.Err() != nil {
		// The caller gave up. The sidecar cancels the guest itself.
		if p.child.Exited() {
			s.ended(sl, p, true, err)
		}
		return nil, ctxError(ctx, fmt.Sprintf("call of skill %s version %s", t.SkillID, t.Version), err)
	}
	if s.isClosed() {
		return nil, fmt.Errorf("%w: call of skill %s version %s ended by Close", ErrClosed, t.SkillID, t.Version)
	}
	if expired.Load() || status.Code(err) == codes.DeadlineExceeded {
		// The sidecar did not answer in time + grace: kill it.
		s.log.Warn("sidecar missed its deadline; killing it", "skill_id", t.SkillID, "skill_version", t.Version, "pid", p.pid, "budget", budget)
		s.ended(sl, p, false, fmt.Errorf("killed: no answer within %v + grace", budget))
		return nil, fmt.Errorf("%w: skill %s version %s did not answer within %v (+%v grace); its sidecar (pid %d) was killed", ErrTimeout, t.SkillID, t.Version, budget, s.cfg.CallGrace, p.pid)
	}
	s.ended(sl, p, true, err)
	return nil, fmt.Errorf("%w: skill %s version %s, pid %d: %v", ErrSidecarCrashed, t.SkillID, t.Version, p.pid, err)
}

// ctxError reports a call that ctx ended: timeout for a deadline,
// canceled otherwise. It wraps ctx.Err() too.
func ctxError(ctx context.Context, what string, cause error) error {
	code := ErrCanceled
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		code = ErrTimeout
	}
	if cause == nil || errors.Is(cause, ctx.Err()) {
		return fmt.Errorf("%w: %s: %w", code, what, ctx.Err())
	}
	return fmt.Errorf("%w: %s: %w (%v)", code, what, ctx.Err(), cause)
}

// NewInvocationID returns a random invocation id (32 hex digits), the kind
// Call makes when CallOptions.InvocationID is empty. A caller that
// registers an invocation elsewhere (its capability broker) before the call
// makes the id with it.
func NewInvocationID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
