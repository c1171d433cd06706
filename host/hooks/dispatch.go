package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/internal/textutil"
)

// Dispatcher defaults and limits.
const (
	// DefaultTimeout is the time limit of a hook call when neither the
	// binding (timeout_ms) nor DispatcherConfig.Timeout sets one.
	DefaultTimeout = 10 * time.Second
	// DefaultWorkers is the number of skills whose hooks may run enqueued
	// events at once when DispatcherConfig.Workers is not set.
	DefaultWorkers = 4
	// DefaultQueueDepth is the number of enqueued events that may wait to be
	// sorted into the skills' queues when DispatcherConfig.QueueDepth is not
	// set.
	DefaultQueueDepth = 256
	// DefaultSkillQueueDepth is the number of enqueued events that may wait
	// for one skill's hooks when DispatcherConfig.SkillQueueDepth is not
	// set. A burst past it is refused per skill with ErrHookQueueFull.
	DefaultSkillQueueDepth = 1024
	// MaxOutputBytes is the largest tool output an Outcome keeps; larger
	// output makes the hook fail with ErrInvalidHookOutput.
	MaxOutputBytes = 64 << 10
	// MaxPayloadBytes is the largest event payload, as JSON, a hook is given.
	MaxPayloadBytes = 256 << 10
	// maxErrBytes bounds the error text of a failed call kept in an Outcome:
	// longer text is cut to maxErrBytes on a rune boundary and "..." is
	// appended.
	maxErrBytes = 1024
)

// CallFunc runs tool toolID of skill skillID with input and returns the
// tool's exit code and JSON output. An empty toolID means the skill's
// default tool (its manifest's operator.plugin.default_tool_id); resolving it
// is the CallFunc's job. The daemon's CallFunc runs the tool in the skill's
// sidecar; its errors (missing skill, quarantined skill, ...) should carry an
// errcode code, which becomes Outcome.Code.
//
// A CallFunc must return soon after ctx is done: ctx carries the hook's time
// limit and is cancelled when the caller of Fire gives up or the Dispatcher is
// closed. It is called concurrently from several goroutines.
type CallFunc func(ctx context.Context, skillID, toolID string, input json.RawMessage) (exitCode int32, output json.RawMessage, err error)

// HookInput is the input a hook's tool receives, as JSON: the hook's id, the
// event (normalized) and the event's payload. For skill events the payload is
// the host/events.Event; for gateway:startup it is StartupPayload(); for Fire
// it is the caller's payload (null when the caller passed nil).
type HookInput struct {
	HookID  string          `json:"hook_id"`
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
}

// DispatcherConfig configures a Dispatcher. Store and Call are required;
// every other field has a default.
type DispatcherConfig struct {
	// Store holds the bindings. They are read afresh for every event, so
	// edits take effect without a restart.
	Store *Store
	// Call runs a hook's tool.
	Call CallFunc
	// Timeout is the time limit of a hook call whose binding sets none
	// (DefaultTimeout when ≤ 0; at most MaxHookTimeout).
	Timeout time.Duration
	// Logger receives a line for every dispatch, failure and dropped event;
	// payloads and outputs are never logged. Default: no logging.
	Logger hclog.Logger
	// Workers is the number of skills whose hooks may run enqueued events
	// at once (DefaultWorkers when ≤ 0). One skill's hooks never run
	// enqueued events concurrently, whatever Workers is.
	Workers int
	// QueueDepth is the number of enqueued events that may wait to be
	// sorted into the skills' queues (DefaultQueueDepth when ≤ 0); past it
	// Enqueue drops the event (see Dropped).
	QueueDepth int
	// SkillQueueDepth is the number of enqueued events that may wait for
	// one skill's hooks (DefaultSkillQueueDepth when ≤ 0); past it the
	// skill's hooks are not run for the event, and each gets an outcome of
	// code hook_queue_full (see Overflowed).
	SkillQueueDepth int
	// OnOutcome, when set, is called with every outcome. For Fire, it is
	// called after all the hooks of the event have finished, in hook id
	// order; for an enqueued event, as each hook finishes, so that one
	// skill's outcomes arrive in event order (and, within an event, in
	// hook id order). It is called from several goroutines at once and must
	// not block for long: the daemon journals the outcomes with it.
	OnOutcome func(Outcome)
	// Journal, when set, is where the Dispatcher reads the events it
	// delivers after Notify: each binding from its cursor on (see
	// "Delivery from the journal" in the package doc).
	Journal Journal
	// Retries is how many times a hook that failed on a journal event is
	// tried again before the Dispatcher gives up on it (DefaultRetries when
	// 0; none when < 0).
	Retries int
	// RetryBackoff is the wait before the first retry, doubled for each
	// next one up to MaxRetryBackoff (DefaultRetryBackoff when ≤ 0).
	RetryBackoff time.Duration
	// PageSize is how many journal events a skill's runner reads at once
	// (DefaultPageSize when ≤ 0): what bounds the memory of a catch-up.
	PageSize int
	// OnGiveUp, when set, is called when the Dispatcher gives up on a hook
	// for a journal event (its last outcome, GaveUp set), before that
	// outcome reaches OnOutcome and before the binding's cursor moves past
	// the event; the daemon journals it. An error is logged; the cursor
	// moves on anyway.
	OnGiveUp func(ctx context.Context, o Outcome) error
}

// Dispatcher runs the hooks bound to events. It starts its router
// goroutine in NewDispatcher; Close stops it and waits for every goroutine
// the Dispatcher started, after which Fire fails with ErrDispatcherClosed
// and Enqueue returns false. A Dispatcher is safe for concurrent use.
//
// Enqueued events flow through one FIFO (queue) to the router, which reads
// the bindings and appends the event to the queue of every skill bound to
// it; each skill with events waiting has one runner goroutine, which runs
// them one at a time, in order, while it holds one of the Workers slots.
type Dispatcher struct {
	store      *Store
	call       CallFunc
	timeout    time.Duration
	log        hclog.Logger
	onOutcome  func(Outcome)
	skillDepth int

	queue    chan job
	slots    chan struct{} // one token per skill running hooks
	stopping chan struct{} // closed by the first Close
	// base is the context of the workers' dispatches; it is cancelled when
	// Close's ctx ends (or when Close returns), and it cancels every call.
	base   context.Context
	cancel context.CancelFunc
	// mu guards closed, and orders Fire's wg.Add before Close's wg.Wait.
	mu     sync.Mutex
	closed bool
	// wg counts the router, the runners, the Fire calls in progress and
	// the tool calls.
	wg sync.WaitGroup
	// smu guards skills: the queues of the skills with events waiting or
	// running. A skill has an entry exactly while its runner runs.
	smu        sync.Mutex
	skills     map[string]*skillQueue
	dropped    atomic.Uint64
	overflowed atomic.Uint64

	// The delivery from the journal (journal.go).
	journal  Journal
	retries  int
	backoff  time.Duration
	pageSize int
	onGiveUp func(context.Context, Outcome) error
	// runners holds the skills whose journal runner runs (under smu), and
	// whether it must look at the journal again before it returns.
	runners map[string]*runner
	// drained holds the skills whose runner reached the end of the
	// journal once (under smu): their next catch-ups are live events.
	drained map[string]bool
	skipped atomic.Uint64
}

type job struct {
	event   string
	payload json.RawMessage
}

// skillJob is an enqueued event for one skill: the skill's enabled
// bindings for the event, in hook id order.
type skillJob struct {
	event    string
	payload  json.RawMessage
	bindings []Binding
}

// skillQueue is the FIFO of one skill's waiting events; its runner pops
// from the head.
type skillQueue struct {
	jobs []skillJob
}

// NewDispatcher returns a Dispatcher with cfg's defaults filled in and its
// workers started. It panics when cfg.Store or cfg.Call is nil, a
// programming error. The caller must Close it.
func NewDispatcher(cfg DispatcherConfig) *Dispatcher {
	if cfg.Store == nil || cfg.Call == nil {
		panic("hooks: NewDispatcher needs a Store and a Call")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	cfg.Timeout = min(cfg.Timeout, MaxHookTimeout)
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.QueueDepth <= 0 {
		cfg.QueueDepth = DefaultQueueDepth
	}
	if cfg.SkillQueueDepth <= 0 {
		cfg.SkillQueueDepth = DefaultSkillQueueDepth
	}
	switch {
	case cfg.Retries == 0:
		cfg.Retries = DefaultRetries
	case cfg.Retries < 0:
		cfg.Retries = 0
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = DefaultRetryBackoff
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = DefaultPageSize
	}
	d := &Dispatcher{
		store:      cfg.Store,
		call:       cfg.Call,
		timeout:    cfg.Timeout,
		log:        cfg.Logger,
		onOutcome:  cfg.OnOutcome,
		skillDepth: cfg.SkillQueueDepth,
		queue:      make(chan job, cfg.QueueDepth),
		slots:      make(chan struct{}, cfg.Workers),
		stopping:   make(chan struct{}),
		skills:     map[string]*skillQueue{},
		journal:    cfg.Journal,
		retries:    cfg.Retries,
		backoff:    cfg.RetryBackoff,
		pageSize:   cfg.PageSize,
		onGiveUp:   cfg.OnGiveUp,
		runners:    map[string]*runner{},
		drained:    map[string]bool{},
	}
	d.base, d.cancel = context.WithCancel(context.Background())
	d.wg.Add(1)
	go d.router()
	return d
}

// Fire runs the enabled hooks bound to event now and returns their outcomes
// (sorted by hook id) and the resolution of their decisions. The hooks run
// concurrently, each under its own time limit, and apart from the queues
// of enqueued events (a caller of Fire waits for its answer, not behind
// other events); a hook that does not answer in
// time is cut off with an outcome of code hook_timeout, and Fire does not wait
// for its tool beyond that (Close does). ctx bounds the whole call: when it ends, the
// calls still running are cancelled (code hook_canceled).
//
// event is normalized (NormalizeEvent); payload is encoded as JSON (a
// json.RawMessage is used as it is) and given to every hook in a HookInput.
// Errors wrap ErrUnknownEvent, ErrInvalidPayload, ErrDispatcherClosed, or
// the errors of Store.Load; a failing hook is an outcome, not an error.
func (d *Dispatcher) Fire(ctx context.Context, event string, payload any) ([]Outcome, Resolution, error) {
	ev, err := NormalizeEvent(event)
	if err != nil {
		return nil, Resolution{}, err
	}
	p, err := encodePayload(payload)
	if err != nil {
		return nil, Resolution{}, err
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, Resolution{}, ErrDispatcherClosed
	}
	d.wg.Add(1)
	d.mu.Unlock()
	defer d.wg.Done()
	outs, err := d.dispatch(ctx, ev, p)
	if err != nil {
		return nil, Resolution{}, err
	}
	return outs, Resolve(outs), nil
}

// Enqueue queues event and returns at once: it never blocks its caller (the
// daemon's event follower). The event's hooks then run skill by skill: the
// hooks of one skill run one at a time, in the order of Enqueue calls
// (and, within an event, in hook id order), while the hooks of different
// skills run in parallel, up to Workers skills at once. So a skill whose
// hook reads and writes its storage sees its events one after another.
//
// It returns false, and logs, when the event is not one of Events() (so
// nothing can be bound to it), when the payload cannot be encoded (see
// Fire), when the Dispatcher is closed, or when the queue is full: the
// event is then dropped and counted (see Dropped). An event that finds
// SkillQueueDepth events already waiting for a skill is not run by that
// skill's hooks: each gets an outcome of code hook_queue_full, logged and
// counted (see Overflowed). Outcomes of enqueued events reach OnOutcome
// and the log only.
func (d *Dispatcher) Enqueue(event string, payload any) bool {
	ev, err := NormalizeEvent(event)
	if err != nil {
		d.log.Debug("event has no hooks; not dispatched", "event", quote(event))
		return false
	}
	p, err := encodePayload(payload)
	if err != nil {
		d.log.Warn("hook event not dispatched", "event", ev, "error", err)
		return false
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		d.log.Debug("hook dispatcher closed; event not dispatched", "event", ev)
		return false
	}
	select {
	case d.queue <- job{event: ev, payload: p}:
		d.mu.Unlock()
		return true
	default:
		d.mu.Unlock()
		n := d.dropped.Add(1)
		d.log.Warn("hook queue full; event dropped", "event", ev, "queue_depth", cap(d.queue), "dropped_total", n)
		return false
	}
}

// Follow enqueues every event that arrives on c (a host/events
// subscription's channel), until c is closed (it then returns nil) or ctx is
// done (it returns ctx.Err()). It blocks; the daemon runs it in a goroutine
// it owns. Events of kinds nothing can be bound to are skipped.
func (d *Dispatcher) Follow(ctx context.Context, c <-chan events.Event) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-c:
			if !ok {
				return nil
			}
			d.Enqueue(e.Kind, e)
		}
	}
}

// Dropped returns how many enqueued events were dropped because the queue
// was full, or because Close's context ended before they ran (counted once
// per skill whose hooks had not run them yet).
func (d *Dispatcher) Dropped() uint64 { return d.dropped.Load() }

// Overflowed returns how many times an enqueued event was refused by a
// skill whose queue held SkillQueueDepth events (once per skill and event;
// each hook of the skill got an outcome of code hook_queue_full).
func (d *Dispatcher) Overflowed() uint64 { return d.overflowed.Load() }

// Close stops taking events, lets the skills' hooks run the queued ones, and
// waits for every goroutine the Dispatcher started and for the Fire calls in
// progress. When ctx ends first, the
// hook calls still running are cancelled, the events still queued are
// dropped, Close waits for the goroutines to return (a CallFunc must honour
// its ctx) and returns an error wrapping ctx.Err(). Close is idempotent;
// every call waits.
func (d *Dispatcher) Close(ctx context.Context) error {
	d.mu.Lock()
	if !d.closed {
		d.closed = true
		close(d.stopping)
	}
	d.mu.Unlock()
	done := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		d.cancel()
		return nil
	case <-ctx.Done():
		d.cancel()
		<-done
		return fmt.Errorf("hooks: close: hook calls cancelled: %w", ctx.Err())
	}
}

// router takes enqueued events in order and hands each to the queues of
// the skills bound to it; it returns once Close was called and the queue
// is empty.
func (d *Dispatcher) router() {
	defer d.wg.Done()
	for {
		select {
		case j := <-d.queue:
			d.route(j)
		case <-d.stopping:
			// Route what is queued, unless Close's ctx ends first.
			for {
				select {
				case j := <-d.queue:
					d.route(j)
				default:
					return
				}
			}
		}
	}
}

// route appends an enqueued event to the queue of every skill with an
// enabled binding for it, or drops it once Close's ctx has ended.
func (d *Dispatcher) route(j job) {
	if d.base.Err() != nil {
		n := d.dropped.Add(1)
		d.log.Warn("hook dispatcher closed; queued event dropped", "event", j.event, "dropped_total", n)
		return
	}
	bindings, err := d.store.List()
	if err != nil {
		d.log.Error("hook dispatch failed", "event", j.event, "error", err)
		return
	}
	bySkill := map[string][]Binding{}
	var order []string // skills in the order of their first hook id
	for _, b := range bindings {
		if !b.Enabled || b.Event != j.event {
			continue
		}
		if _, ok := bySkill[b.PluginID]; !ok {
			order = append(order, b.PluginID)
		}
		bySkill[b.PluginID] = append(bySkill[b.PluginID], b)
	}
	for _, skill := range order {
		d.push(skill, skillJob{event: j.event, payload: j.payload, bindings: bySkill[skill]})
	}
}

// push appends sj to skill's queue, starting the skill's runner when it
// has none, or reports the overflow when the queue is full. The router
// holds a count in d.wg, so the runner may add its own.
func (d *Dispatcher) push(skill string, sj skillJob) {
	d.smu.Lock()
	q, running := d.skills[skill]
	if running && len(q.jobs) >= d.skillDepth {
		d.smu.Unlock()
		n := d.overflowed.Add(1)
		d.log.Warn("hook queue of skill full; event not run by its hooks", "skill_id", skill, "event", sj.event,
			"skill_queue_depth", d.skillDepth, "overflowed_total", n)
		for _, b := range sj.bindings {
			input, _ := json.Marshal(HookInput{HookID: b.HookID, Event: sj.event, Payload: sj.payload}) // valid JSON
			o := Outcome{HookID: b.HookID, PluginID: b.PluginID, ToolID: b.ToolID, Event: sj.event, Payload: input}
			d.report(fail(o, fmt.Errorf("%w: skill %s has %d events waiting for its hooks, the limit (SkillQueueDepth); hook not run for %s",
				ErrHookQueueFull, quote(skill), d.skillDepth, sj.event)))
		}
		return
	}
	if !running {
		q = &skillQueue{}
		d.skills[skill] = q
		d.wg.Add(1)
		go d.runSkill(skill, q)
	}
	q.jobs = append(q.jobs, sj)
	d.smu.Unlock()
}

// runSkill runs the queued events of one skill, one at a time and in
// order, each while it holds a Workers slot, and returns when the queue is
// empty. Once Close's ctx has ended, it drops what is left.
func (d *Dispatcher) runSkill(skill string, q *skillQueue) {
	defer d.wg.Done()
	for {
		d.smu.Lock()
		if len(q.jobs) == 0 {
			delete(d.skills, skill)
			d.smu.Unlock()
			return
		}
		sj := q.jobs[0]
		q.jobs[0] = skillJob{} // let the payload go
		q.jobs = q.jobs[1:]
		d.smu.Unlock()

		acquired := false
		select {
		case d.slots <- struct{}{}:
			acquired = true
		case <-d.base.Done():
		}
		if d.base.Err() != nil {
			if acquired {
				<-d.slots
			}
			n := d.dropped.Add(1)
			d.log.Warn("hook dispatcher closed; queued event dropped", "event", sj.event, "skill_id", skill, "dropped_total", n)
			continue
		}
		for _, b := range sj.bindings {
			d.report(d.runHook(d.base, sj.event, b, sj.payload))
		}
		<-d.slots
	}
}

// dispatch runs the enabled hooks bound to event ev with payload p. The
// caller holds a count in d.wg, so the tool-call goroutines may add theirs.
func (d *Dispatcher) dispatch(ctx context.Context, ev string, p json.RawMessage) ([]Outcome, error) {
	snap, err := d.store.Snapshot()
	if err != nil {
		return nil, err
	}
	matched := snap.Enabled(ev)
	outs := make([]Outcome, len(matched))
	var wg sync.WaitGroup
	wg.Add(len(matched))
	for i, b := range matched {
		go func() {
			defer wg.Done()
			outs[i] = d.runHook(ctx, ev, b, p)
		}()
	}
	wg.Wait()
	for _, o := range outs {
		d.report(o)
	}
	return outs, nil
}

// report logs an outcome and hands it to OnOutcome.
func (d *Dispatcher) report(o Outcome) {
	if o.Failed() {
		d.log.Warn("hook failed", "hook_id", o.HookID, "skill_id", o.PluginID, "event", o.Event, "code", o.Code, "error", o.Err, "duration", o.Duration)
	} else {
		d.log.Debug("hook dispatched", "hook_id", o.HookID, "skill_id", o.PluginID, "event", o.Event, "decision", o.Decision, "exit_code", o.ExitCode, "duration", o.Duration)
	}
	if d.onOutcome != nil {
		d.onOutcome(o)
	}
}

type callResult struct {
	code int32
	out  json.RawMessage
	err  error
}

// runHook calls the hook's tool and turns the answer into an Outcome. The
// call runs in a goroutine counted in d.wg, so that runHook can return at the
// hook's deadline even when the CallFunc is slow to notice it.
func (d *Dispatcher) runHook(ctx context.Context, ev string, b Binding, p json.RawMessage) Outcome {
	input, _ := json.Marshal(HookInput{HookID: b.HookID, Event: ev, Payload: p}) // p is valid JSON
	o := Outcome{HookID: b.HookID, PluginID: b.PluginID, ToolID: b.ToolID, Event: ev, Payload: input, OnFailure: b.EffectiveOnFailure()}
	timeout := d.timeout
	if b.TimeoutMs > 0 {
		timeout = b.Timeout()
	}
	callCtx, cancel := context.WithTimeout(withHookCall(ctx, b.HookID), timeout)
	defer cancel()
	stop := context.AfterFunc(d.base, cancel)
	defer stop()

	start := time.Now()
	results := make(chan callResult, 1)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		code, out, err := d.call(callCtx, b.PluginID, b.ToolID, input)
		results <- callResult{code: code, out: out, err: err}
	}()
	var r callResult
	answered := false
	select {
	case r = <-results:
		answered = true
	case <-callCtx.Done():
	}
	o.Duration = time.Since(start)

	// The deadline is read from the clock too: a failure that arrives after
	// it (the sidecar's own timeout, say) can win the select before the
	// context's timer has fired on a loaded machine.
	dl, _ := callCtx.Deadline()
	if (callCtx.Err() != nil || !time.Now().Before(dl)) && (!answered || r.err != nil) {
		// Cut off (an error after the deadline is taken as the cut-off's):
		// by the caller, by Close, or by the hook's own deadline.
		switch {
		case ctx.Err() != nil:
			return fail(o, fmt.Errorf("%w: %w", ErrHookCanceled, ctx.Err()))
		case d.base.Err() != nil:
			return fail(o, fmt.Errorf("%w: the dispatcher was closed", ErrHookCanceled))
		}
		return fail(o, fmt.Errorf("%w: skill %s did not answer within %v", ErrHookTimeout, quote(b.PluginID), timeout))
	}
	if r.err != nil {
		o.Err = textutil.Ellipsize(strings.ToValidUTF8(r.err.Error(), "\uFFFD"), maxErrBytes, "...")
		o.Code = errcode.Of(r.err)
		return o
	}
	o.ExitCode = r.code
	o.Decision = DecisionFromExitCode(r.code)
	switch {
	case len(r.out) > MaxOutputBytes:
		return fail(o, fmt.Errorf("%w: output is %d bytes, the limit is %d bytes (MaxOutputBytes)", ErrInvalidHookOutput, len(r.out), MaxOutputBytes))
	case len(r.out) > 0 && !json.Valid(r.out):
		return fail(o, fmt.Errorf("%w: output is not valid JSON", ErrInvalidHookOutput))
	case len(r.out) > 0:
		o.Output = append(json.RawMessage(nil), r.out...)
	}
	if !Allowed(ev, o.Decision) {
		return fail(o, fmt.Errorf("%w: decision %s (exit code %d) is not allowed for %s", ErrDecisionNotAllowed, o.Decision, r.code, ev))
	}
	return o
}

func fail(o Outcome, err error) Outcome {
	o.Err = err.Error()
	o.Code = errcode.Of(err)
	return o
}

// encodePayload encodes an event payload as JSON: nil is null, a
// json.RawMessage must already be valid JSON, anything else goes through
// json.Marshal. The result is at most MaxPayloadBytes.
func encodePayload(payload any) (json.RawMessage, error) {
	var p json.RawMessage
	switch v := payload.(type) {
	case nil:
		return json.RawMessage("null"), nil
	case json.RawMessage:
		if !json.Valid(v) {
			return nil, fmt.Errorf("%w: payload is not valid JSON", ErrInvalidPayload)
		}
		p = append(json.RawMessage(nil), v...)
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidPayload, err)
		}
		p = data
	}
	if len(p) > MaxPayloadBytes {
		return nil, fmt.Errorf("%w: payload is %d bytes of JSON, the limit is %d bytes (MaxPayloadBytes)", ErrInvalidPayload, len(p), MaxPayloadBytes)
	}
	return p, nil
}

// hookCallKey marks the context of a hook's tool call.
type hookCallKey struct{}

// withHookCall marks ctx as the context of hook hookID's tool call.
func withHookCall(ctx context.Context, hookID string) context.Context {
	return context.WithValue(ctx, hookCallKey{}, hookID)
}

// HookCallFrom reports whether ctx is (derived from) the context the
// Dispatcher gives a CallFunc for a hook's tool call, and which hook made
// it. The host fires no run-phase hooks for such a call: a run hook would
// otherwise fire itself, without end.
func HookCallFrom(ctx context.Context) (hookID string, ok bool) {
	hookID, ok = ctx.Value(hookCallKey{}).(string)
	return hookID, ok
}
