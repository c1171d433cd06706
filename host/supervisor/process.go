package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/palyra-go/palyra/host/internal/launch"
	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// pluginLogBufferBytes is the size of the buffer go-plugin reads a
// sidecar's stderr through (ClientConfig.PluginLogBufferSize): a sidecar's
// log lines are hclog JSON records of well under 1 KiB.
const pluginLogBufferBytes = 16 << 10

// Start starts the sidecar of t (and loads its module) unless one runs
// already, without calling a tool: the eager start of a skill version.
// A failed start counts as a crash, as on a call.
func (s *Supervisor) Start(ctx context.Context, t Target) error {
	if !t.valid() {
		return fmt.Errorf("%w: skill id, module path and module sha256 are required", ErrInvalidTarget)
	}
	if err := s.enter(); err != nil {
		return err
	}
	defer s.calls.Done()
	s.mu.Lock()
	sl := s.slotLocked(skey{t.SkillID, t.Version})
	sl.lastUsed = s.cfg.Clock.Now()
	// Started eagerly, the version is expected to be called: in use.
	sl.inUse = true
	s.mu.Unlock()
	_, err := s.acquire(ctx, sl, &t)
	return err
}

// Stop stops the sidecars of a skill version: the serving one and its
// standby, both gracefully (in-flight calls finish first, bounded by
// DefaultStopTimeout), and returns once they are gone. A start of the
// version under way is waited for (bounded by ctx) and its sidecar stopped
// too; a standby still being made is dropped when ready (a slot without a
// serving sidecar keeps none). The host stops a version this way when it
// is disabled, quarantined or removed. The next call starts a new one.
func (s *Supervisor) Stop(ctx context.Context, skillID, version string) {
	k := skey{skillID, version}
	s.mu.Lock()
	sl := s.sidecars[k]
	if sl == nil {
		s.mu.Unlock()
		return
	}
	if ch := sl.starting; ch != nil {
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		case <-s.stop:
		}
		s.mu.Lock()
	}
	var procs []*proc
	for _, pp := range []**proc{&sl.standby, &sl.proc} {
		if *pp != nil {
			procs = append(procs, *pp)
			*pp = nil
		}
	}
	sl.inUse = false
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.log.Debug("stopping sidecar", "pid", p.pid)
			s.endProc(p, true)
		}()
	}
	wg.Wait()
}

// acquire returns the running sidecar of sl, starting one if needed (after
// the restart backoff of a crashed one). Only one start per slot runs at a
// time; other callers wait for it. A start is followed, in the background
// and once the version is quiet, by the spares' refill and, for a version
// in use, its standby (whenQuiet).
func (s *Supervisor) acquire(ctx context.Context, sl *slot, t *Target) (*proc, error) {
	lk := t.loadKey()
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		if sl.looping {
			last := sl.lastErr
			s.mu.Unlock()
			return nil, fmt.Errorf("%w: skill %s version %s (last error: %s)", ErrCrashLooping, t.SkillID, t.Version, last)
		}
		if p := sl.proc; p != nil {
			if p.child.Exited() {
				s.mu.Unlock()
				s.ended(sl, p, true, errors.New("sidecar exited"))
				continue
			}
			if p.loadKey == lk {
				s.mu.Unlock()
				return p, nil
			}
			// The installed module or its load settings changed: retire
			// the old sidecar (graceful Stop waits for its calls).
			sl.proc = nil
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.endProc(p, true)
			}()
		}
		if ch := sl.starting; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		sl.starting = ch
		wait := sl.nextStart.Sub(s.cfg.Clock.Now())
		sb := sl.standby
		sl.standby = nil
		s.mu.Unlock()

		var p *proc
		var err error
		if sb = s.usableStandby(sb, lk); sb != nil {
			// Promote the standby, after the backoff like any restart.
			if err = s.waitBackoff(ctx, wait); err == nil {
				p = sb
			} else {
				s.endInBackground(sb)
			}
		} else {
			p, err = s.startAfter(ctx, wait, t, lk)
		}

		s.mu.Lock()
		sl.starting = nil
		close(ch)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, ErrClosed) {
				s.crashLocked(sl, err)
			}
			s.mu.Unlock()
			return nil, err
		}
		if s.closed {
			s.mu.Unlock()
			s.endProc(p, false)
			return nil, ErrClosed
		}
		sl.proc = p
		sl.starts++
		sl.cacheHit = p.cacheHit
		sl.hardening = p.hardening
		s.mu.Unlock()
		s.whenQuiet(sl, *t, lk)
		return p, nil
	}
}

// startAfter waits out the restart backoff on the Clock, then starts.
func (s *Supervisor) startAfter(ctx context.Context, wait time.Duration, t *Target, lk string) (*proc, error) {
	if err := s.waitBackoff(ctx, wait); err != nil {
		return nil, err
	}
	return s.start(ctx, t, lk)
}

// waitBackoff waits out the restart backoff on the Clock (nothing when
// wait <= 0), ended early by ctx or Close.
func (s *Supervisor) waitBackoff(ctx context.Context, wait time.Duration) error {
	if wait <= 0 {
		return nil
	}
	tm := s.cfg.Clock.NewTimer(wait)
	select {
	case <-tm.C():
		return nil
	case <-ctx.Done():
		tm.Stop()
		return ctx.Err()
	case <-s.stop:
		tm.Stop()
		return ErrClosed
	}
}

// start returns a sidecar with t's module loaded: a spare one when the
// supervisor has one ready (its process start and go-plugin handshake are
// already done), else a new one. A spare that fails before it answers
// LoadSkill is replaced by a new sidecar once. The caller refills the
// spares after a successful start.
func (s *Supervisor) start(ctx context.Context, t *Target, lk string) (*proc, error) {
	if p := s.takeSpare(); p != nil {
		q, err := s.load(ctx, p, t, lk)
		if err == nil || !errors.Is(err, ErrSidecarStart) || ctx.Err() != nil {
			return q, err
		}
		s.log.Warn("a spare sidecar failed to load a skill; starting a new one", "skill_id", t.SkillID, "skill_version", t.Version, "error", err)
	}
	p, err := s.spawn()
	if err != nil {
		return nil, err
	}
	return s.load(ctx, p, t, lk)
}

// spawn starts a sidecar through the launcher, with no skill loaded yet:
// process start, go-plugin handshake (mutual TLS with pinned Ed25519 keys)
// and dispense. Its broker
// is bound to a skill by load.
func (s *Supervisor) spawn() (*proc, error) {
	log := s.cfg.Logger.Named("sidecar")
	child, err := launch.New(s.cfg.SocketDir, "sc-")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSidecarStart, err)
	}
	cred, err := s.credential(child.Dir())
	if err != nil {
		_ = child.Close()
		return nil, fmt.Errorf("%w: %v", ErrSidecarStart, err)
	}
	if s.cfg.CacheDir != "" {
		// The sidecar may write only what exists when it restricts its
		// file system (at LoadSkill).
		if err := os.MkdirAll(s.cfg.CacheDir, 0o700); err != nil {
			_ = child.Close()
			return nil, fmt.Errorf("%w: cache dir: %v", ErrSidecarStart, err)
		}
	}
	// No skill yet (a spare may take any): the per-skill part of the
	// hardening (Landlock's module rule, RLIMIT_DATA) comes with
	// LoadSkill, before the sidecar reads a module byte.
	args := append(slices.Clip(s.cfg.SidecarArgs), s.hardenArgs(child.Dir())...)
	if s.cfg.NoMemoryPool {
		args = append(args, "--"+sidecarplugin.FlagNoMemoryPool)
	}
	// Mutual TLS over Ed25519 keys pinned for this sidecar
	// (sidecarplugin.PinnedConfig), not go-plugin's AutoMTLS: its P-521
	// certificates and signatures cost 14 to 18 ms of a cold start.
	id, err := sidecarplugin.NewIdentity()
	if err != nil {
		_ = child.Close()
		return nil, fmt.Errorf("%w: %v", ErrSidecarStart, err)
	}
	r := &cmdRunner{child: child, cmd: launch.Cmd{Path: s.cfg.SidecarPath, Args: args, Credential: cred}, clientKey: id.PublicKey}
	bb := newBoundBroker(s.cfg.Broker)
	// go-plugin makes a directory for the sockets of this sidecar inside
	// the child's private directory, for both ends: the sidecar's
	// (PLUGIN_UNIX_SOCKET_DIR) and the supervisor's own GRPCBroker
	// listener that serves the capability broker. UnixSocketConfig takes
	// effect only with a RunnerFunc (and no Cmd); SkipHostEnv keeps the
	// host's environment out of the variables go-plugin hands the runner.
	pc := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  sidecarplugin.Handshake,
		Plugins:          sidecarplugin.ClientPlugins(bb.plugin()),
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		TLSConfig:        sidecarplugin.PinnedConfig(id, r.serverKey),
		GRPCDialOptions:  sidecarplugin.DialOptions(),
		SkipHostEnv:      true,
		UnixSocketConfig: &goplugin.UnixSocketConfig{TempDir: child.Dir(), Group: socketGroup(cred)},
		RunnerFunc:       r.runnerFunc,
		StartTimeout:     s.cfg.StartTimeout,
		Logger:           log,
		SyncStdout:       io.Discard,
		SyncStderr:       io.Discard,
		// go-plugin reads the sidecar's stderr (its hclog JSON lines)
		// through a buffer of this size for the sidecar's whole life: 64 KiB
		// by default, 3 MiB of heap for 50 sidecars. A longer line is still
		// logged, in pieces, at debug level.
		PluginLogBufferSize: pluginLogBufferBytes,
	})
	p := &proc{pc: pc, child: child, runner: r, broker: bb, log: log, dead: make(chan struct{})}
	fail := func(err error) (*proc, error) {
		s.endProc(p, false)
		return nil, err
	}
	began := time.Now()
	rpc, err := pc.Client()
	p.pid = child.Pid()
	if err != nil {
		// Why the sidecar's TLS key is missing, if it is: its first
		// line was refused, or it never wrote one.
		if _, kerr := r.serverKey(); kerr != nil {
			err = fmt.Errorf("%v (%v)", err, kerr)
		}
		return fail(fmt.Errorf("%w: %s: %v", ErrSidecarStart, s.cfg.SidecarPath, err))
	}
	raw, err := rpc.Dispense(sidecarplugin.PluginName)
	if err != nil {
		return fail(fmt.Errorf("%w: dispense: %v", ErrSidecarStart, err))
	}
	cl, ok := raw.(*sidecarplugin.Client)
	if !ok {
		return fail(fmt.Errorf("%w: dispensed %T", ErrSidecarStart, raw))
	}
	p.client = cl
	log.Debug("sidecar spawned", "pid", p.pid, "handshake", time.Since(began))
	return p, nil
}

// load binds p to t's skill and loads t's module in it. On failure p is
// ended.
func (s *Supervisor) load(ctx context.Context, p *proc, t *Target, lk string) (*proc, error) {
	p.loadKey = lk
	p.grants = t.Grants
	p.log = p.log.With("skill_id", t.SkillID, "skill_version", t.Version)
	p.broker.bind(t.SkillID)
	fail := func(err error) (*proc, error) {
		s.endProc(p, false)
		return nil, err
	}
	began := time.Now()
	lctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	lr, err := p.client.LoadSkill(lctx, &sidecarv1.LoadSkillRequest{
		SkillId:            t.SkillID,
		SkillVersion:       t.Version,
		Module:             &sidecarv1.LoadSkillRequest_ModulePath{ModulePath: t.ModulePath},
		ModuleSha256:       t.ModuleSHA256,
		CacheDir:           s.cfg.CacheDir,
		Entrypoint:         t.Entrypoint,
		Limits:             limitsProto(t.Limits, s.cfg.sidecarTimeoutExtra),
		PreparedInstances:  s.cfg.PreparedInstances,
		Grants:             grantsProto(t.Grants),
		Tools:              toolsProto(t.Tools),
		HardenMaxDataBytes: s.hardenDataLimit(t),
	})
	if err != nil {
		var se *sidecarplugin.Error
		if errors.As(err, &se) {
			// The sidecar runs and refused the module: its code stands.
			return fail(fmt.Errorf("loading skill %s version %s: %w", t.SkillID, t.Version, err))
		}
		// The sidecar did not answer (it died, or ctx ended): a failed start.
		return fail(fmt.Errorf("%w: loading skill %s version %s: %w", ErrSidecarStart, t.SkillID, t.Version, err))
	}
	p.cacheHit = lr.GetCacheHit()
	p.hardening = hardeningOf(lr.GetHardening())
	p.log.Debug("sidecar started", "pid", p.pid, "cache_hit", p.cacheHit, "load", time.Since(began), "hardening", p.hardening.Level())
	return p, nil
}

// ended records that p is over (crash: it died by itself) and ends it.
// Only the first report counts.
func (s *Supervisor) ended(sl *slot, p *proc, crash bool, cause error) {
	s.mu.Lock()
	if sl.proc == p {
		sl.proc = nil
		if crash {
			s.crashLocked(sl, cause)
		} else if cause != nil {
			sl.lastErr = cause.Error()
		}
	}
	s.mu.Unlock()
	s.endProc(p, false)
}

// endProc ends a sidecar process: graceful asks it to Stop first (which
// waits for its in-flight calls) and waits for it to exit, both bounded by
// DefaultStopTimeout; otherwise, or when it is still there after that, its
// process group is SIGKILLed. The exit is the supervisor's doing either
// way, so it is not logged as an error (cmdRunner.Wait). It returns once
// the process is reaped, go-plugin's goroutines are done and the private
// directory is removed. It is idempotent: later calls wait for the first.
func (s *Supervisor) endProc(p *proc, graceful bool) {
	s.endProcCtx(context.Background(), p, graceful)
}

// endProcCtx is endProc whose graceful part ctx can also cut short.
func (s *Supervisor) endProcCtx(ctx context.Context, p *proc, graceful bool) {
	p.once.Do(func() {
		defer close(p.dead)
		p.runner.expectExit()
		if graceful && ctx.Err() == nil && p.client != nil && !p.child.Exited() {
			sctx, cancel := context.WithTimeout(ctx, DefaultStopTimeout)
			if err := p.client.Stop(sctx); err == nil {
				// The sidecar has answered and drains its gRPC server,
				// which ends once this side's connection is gone: close
				// the calls stream, then the connection (go-plugin's
				// Kill, which waits for the exit, bounded). Waiting for
				// the exit with the connection open would wait out the
				// sidecar's StopGrace on every stop.
				p.client.Close()
				p.pc.Kill()
				_ = p.child.Wait(sctx)
			}
			cancel()
		}
		if err := p.child.Kill(); err != nil {
			p.log.Warn("killing the sidecar failed", "pid", p.pid, "error", err)
		}
		p.pc.Kill()
		if p.client != nil {
			p.client.Close()
		}
		p.runner.close()
		if err := p.child.Close(); err != nil {
			p.log.Warn("cleaning up after the sidecar failed", "pid", p.pid, "error", err)
		}
	})
	<-p.dead
}
