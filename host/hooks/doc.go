// Package hooks binds skill tools to host events and dispatches those events
// to them: "when event E happens, call tool T of skill S with the event as
// input".
//
// It is the Palyra-Go form of Palyra's hook runtime (the same bindings.json, event names and exit-code decisions). The
// palyra CLI edits the bindings; the palyra-host daemon follows the host's
// events (host/events) and hands each to a Dispatcher, which calls the bound
// skills' tools through a CallFunc the daemon supplies (the daemon runs the
// tool in the skill's sidecar). This package imports neither the supervisor
// nor the host package: a CallFunc is the whole boundary.
//
// # Bindings file
//
// The bindings live in <state>/hooks/bindings.json, in Palyra's format:
//
//	{
//	  "schema_version": 1,
//	  "updated_at_unix_ms": 1714300000000,
//	  "entries": [
//	    {
//	      "hook_id": "audit.quarantine",
//	      "event": "skill:quarantined",
//	      "plugin_id": "acme.auditor",
//	      "enabled": true,
//	      "operator": {"display_name": "...", "notes": "...", "owner_principal": "...", "updated_by": "..."},
//	      "created_at_unix_ms": 1714300000000,
//	      "updated_at_unix_ms": 1714300000000
//	    }
//	  ]
//	}
//
// Entries are sorted by hook_id; hook_id and plugin_id are lower-cased, at
// most MaxIDLength bytes of [a-z0-9._-]. Palyra binds a hook to a plugin
// binding, which in turn names a skill; Palyra-Go has no separate plugin
// bindings, so plugin_id is the skill id of the hook skill.
//
// Palyra-Go adds two optional keys to an entry, written only when set:
//
//   - tool_id: the tool of the skill to call. When it is absent the daemon
//     calls the tool named by the skill manifest's
//     operator.plugin.default_tool_id; this package leaves it empty and the
//     CallFunc resolves it.
//   - timeout_ms: the hook's own time limit, at most MaxHookTimeout. When it
//     is absent the Dispatcher's Timeout applies.
//   - on_failure: "open" or "closed", for run phases only: what a call does
//     when the hook fails or times out (see "Run phases"). When it is
//     absent the phase's default applies.
//
// A file that uses them may not be readable by Palyra itself, whose
// structures reject unknown keys.
//
// Parsing is strict: unknown or duplicate keys, values of the wrong type,
// invalid ids, unknown events and duplicate hook ids are errors wrapping
// ErrInvalidBindings, and a *FieldError in the chain names the entry index and
// the field at fault. The file is limited to MaxBindingsFileBytes and
// MaxEntries entries. A schema_version above SchemaVersion is ErrSchemaTooNew.
// Legacy forms are read and marked File.Migrated; the next write saves them
// in the current form:
//
//   - a bare JSON array of entries, without the wrapper object;
//   - a wrapper without schema_version (version 0);
//   - entries that name the skill with "skill_id" instead of "plugin_id";
//   - events spelled in another case, with surrounding white space, run
//     phases without their "run:" prefix ("before_tool"), and journal-style
//     dotted names ("skill.quarantined"); see NormalizeEvent.
//
// Store edits the file safely from several processes (the CLI and the daemon
// at once): every mutation takes an exclusive lock on bindings.json.lock,
// re-reads the file, changes it and replaces it atomically (mode 0600).
// Readers take no lock; they see the old file or the new one.
//
// # Events
//
// The bindable events are gateway:startup, the skill lifecycle events
// (skill:installed, skill:updated, skill:enabled, skill:disabled,
// skill:quarantined, skill:removed, skill:crashlooping) and the run phases
// run:before_run, run:before_tool, run:after_tool, run:before_delivery and
// run:after_run. The daemon fires gateway:startup when it serves and
// delivers the skill events from its journal, each binding from its own
// cursor (see "Delivery from the journal"); the host fires the run phases
// in every tool call that passes its call gate (host.Host.Call and
// SubmitForm; see "Run phases" below), and an operator can fire any event
// by hand ("palyra hooks fire").
//
// # Run phases
//
// A call of an installed skill's tool that passed the gate's checks
// fires, when enabled bindings name them: run:before_run and
// run:before_tool before the sidecar is called, run:after_tool when it
// answered (or failed), run:before_delivery before a successful result is
// handed back, and run:after_run at the end, also when the call failed
// or a hook stopped it. The host fires each phase with Fire and applies
// the resolution: block fails the call with blocked_by_hook naming the
// hook and its reason; request_approval in a before phase holds it as a
// pending approval of the host's approval step (at before_delivery, where
// the tool already ran, it withholds the result:
// approval_requested_by_hook);
// fail_run fails it with run_failed_by_hook and the hook's exit code;
// annotate attaches the hook's message to the call's result;
// transform_preview (run:before_delivery only) sets the result's preview,
// a text shown in place of the output, which itself never changes. A
// hook's reason or message is the "message" of its output: a hook that
// exits non-zero writes a tool error {"code","message"} (sdk/ABI.md §4).
// The payload of a run phase is a host.RunHookPayload: the run id (one
// per call), the principal, the skill, version and tool, the input's size
// and sha256 (and the input itself up to 4 KiB), and after the tool the
// result's summary: code, exit code, duration, output size and sha256
// (and the output up to 4 KiB).
//
// A hook that fails (error, timeout, output that is not JSON, a decision
// its phase does not allow) is handled as its binding's on_failure says:
// "closed" fails the call (run_hook_failed), "open" lets it go on and
// reports the failure as an annotation. Without on_failure the phase
// decides (DefaultOnFailure): closed for run:before_*, open for
// run:after_*. A hook's own tool call fires no run hooks (HookCallFrom).
// A call with no enabled run-phase binding pays one stat of the bindings
// file (Store.Snapshot), nothing more.
//
// # Hook input contract
//
// The tool of a hook receives one JSON object as its input (HookInput):
//
//	{"hook_id": "audit.quarantine", "event": "skill:quarantined", "payload": <the event>}
//
// For skill events the payload is the host/events.Event as JSON; for
// gateway:startup it is StartupPayload(); for Fire it is whatever the caller
// passed. Palyra never hands the payload to the module (its docs say it
// does); Palyra-Go does.
//
// # Decisions
//
// A hook answers with its tool's exit code, read as Palyra reads it
// (DecisionFromExitCode): 0 continue, 10 annotate, 20 request_approval, 30
// block, 40 transform_preview, below 0 or from 50 up fail_run, any other code
// from 1 to 49 annotate. Each event allows only some decisions (Allowed):
// continue and annotate everywhere; request_approval and block in
// run:before_run, run:before_tool and run:before_delivery; transform_preview
// only in run:before_delivery; fail_run in every run phase but run:after_run.
// The gateway and skill events are notifications: only continue and annotate
// are allowed. A decision not allowed for its event makes the hook's outcome a
// failure (code hook_decision_not_allowed), as Palyra's hook.failed. Resolve
// combines the outcomes of one event into one decision.
//
// # Dispatch
//
// Dispatcher.Fire runs the enabled hooks bound to an event at once,
// concurrently, each under its time limit, and returns their outcomes and
// the resolution; "palyra hooks fire" and the code running a run phase use
// it. Dispatcher.Enqueue is the path for events that are not journaled,
// handed over in process (Dispatcher.Follow reads a host/events
// subscription into it; the daemon's skill events take the journal path
// instead, see "Delivery from the journal"): it never blocks; the event waits in a bounded queue (QueueDepth) for the router
// goroutine, and when that queue is full it is dropped, counted
// (Dispatcher.Dropped) and logged. Dispatcher.Close stops taking events,
// lets the queued ones run, and waits for every goroutine the Dispatcher
// started.
//
// # Order of enqueued events
//
// A skill's hooks run one at a time, in event order. The router reads the
// bindings for each event and appends the event to a queue per hook skill;
// each skill with events waiting has one runner, which runs them in order
// (an event's hooks of that skill in hook id order), so a hook never runs
// concurrently with another hook of the same skill for an enqueued event,
// and a hook that reads and then writes the skill's storage sees every
// earlier event's write. Different skills run in parallel, up to Workers
// of them at once; a slow or stuck skill holds only its own queue. Memory
// is bounded: at most SkillQueueDepth events wait per skill (and skills
// are bounded by MaxEntries bindings). An event that finds a skill's
// queue full is not run by that skill's hooks; that is never silent: each
// of them gets an outcome of code hook_queue_full (ErrHookQueueFull, the
// limit named in the message) through OnOutcome, so the daemon journals it
// as a hook.failed event, and the dispatcher logs it and counts it
// (Dispatcher.Overflowed). Fire is apart from the queues: a Fire and an
// enqueued event may run a skill's hooks at the same time, which is one
// reason the storage capability has compare-and-swap (sdk/ABI.md §5.3).
//
// Every hook call ends in an Outcome. A call that fails (the CallFunc's
// error, such as a missing or quarantined skill, with its errcode code; a
// timeout, hook_timeout; a cancellation, hook_canceled; output over
// MaxOutputBytes or not JSON, invalid_hook_output; a decision not allowed,
// hook_decision_not_allowed; a full skill queue, hook_queue_full) is a
// failed outcome, not an error of Fire, and does not vote in Resolve, as in
// Palyra; Resolution.Failed lists such hooks for callers that must fail
// closed.
//
// # Cursors
//
// Every binding keeps a cursor: the id of the last journal event it is
// done with. The cursors live beside the bindings, in
// <state>/hooks/cursors.json:
//
//	{"schema_version": 1, "cursors": {"audit.quarantine": {"event_id": 42,
//	  "binding_created_at_unix_ms": 1714300000000, "updated_at_unix_ms": 1714300000100}}}
//
// and are written under the bindings' lock, atomically, like the bindings
// (a separate file because Palyra's bindings.json rejects unknown keys,
// and because a cursor moves on every event while the bindings change by
// hand). A cursor names the creation time of its binding: a cursor left by
// a removed binding is ignored by a new binding of the same hook id.
//
// A binding's cursor starts at the journal's head when it is bound
// (Store.Bind, with WithJournalHead): a new binding is delivered the events
// journaled after it, not the history. Enabling a disabled binding starts
// it at the head again: the events journaled while it was disabled are not
// delivered (disabled means "do not deliver", not "hold"). Removing a
// binding removes its cursor. A binding without a cursor (made by hand,
// by Palyra's tools, or before cursors existed) gets one at the head when
// the Dispatcher first sees it, which it logs. Deleting cursors.json makes
// every binding start at the head.
//
// # Delivery from the journal
//
// A Dispatcher with a Journal delivers the skill events from it (the
// daemon's Journal is the inventory's journal, which every process
// working on the state directory writes, the CLI included). Notify wakes
// it: the daemon calls it when it starts and whenever it sees new events.
// Each hook skill with enabled bindings to skill events then gets one
// runner goroutine, which reads the journal after the lowest cursor of the
// skill's bindings, a page (PageSize events) at a time, and for each event
// runs the skill's bindings of that event's kind whose cursor is behind it,
// in hook id order, one at a time; the runner returns at the end of the
// journal. So:
//
//   - Catch-up: a daemon that starts delivers what each binding has not
//     been delivered, the events journaled while no daemon ran (a
//     "palyra skills disable" run while the daemon was down) included.
//     Memory is bounded by the page, whatever the backlog; a catch-up of
//     more than one page is logged ("hooks catching up with the journal",
//     from, to) and its end too ("hooks caught up with the journal": from,
//     to, events, pages, took).
//   - Hand-over: the live events are read from the same journal, after the
//     same cursors, so there is no gap and no duplicate between the
//     catch-up and the live events, whoever journaled them.
//   - Order: a binding is delivered its events in journal order, and one
//     skill's hooks run one at a time (as for enqueued events, see "Order
//     of enqueued events"); different skills run in parallel, up to
//     Workers at once, each at its own pace.
//   - At least once: a binding's cursor moves past an event only after
//     its hook ran for it (or the Dispatcher gave up, below), and past
//     the events of other kinds at the end of each page. A Dispatcher
//     closed, or a daemon killed, before that leaves the cursor before the
//     event, and the next Dispatcher delivers it again. In the normal case
//     (no crash), each binding is delivered each event exactly once.
//   - Failures: a hook that fails on a journal event (an error, a
//     timeout, a missing or quarantined skill) is tried again after
//     RetryBackoff, doubled for each next try up to MaxRetryBackoff, up to
//     Retries more times (DefaultRetries: 3 more, after 1 s, 2 s, 4 s);
//     every try's outcome is reported (Outcome.EventID, Attempt). A
//     failure a retry cannot change (hook_decision_not_allowed,
//     invalid_hook_output) is not tried again. Then the Dispatcher gives
//     up: the last outcome has GaveUp set, OnGiveUp records it (the daemon
//     journals a skill.hook_gave_up event on the hook skill, naming the
//     hook, the event, its id, the tries and the code) and the cursor
//     moves on. The skill's later events wait meanwhile, so the order
//     holds. A hook is never retried forever.
//   - Pruned events: ids grow by one; events gone from the journal (a
//     retention job deleted them) before a binding was delivered them
//     are skipped, with a warning naming the ids, and counted (Skipped).
//
// In a cluster the host does not deliver hooks itself (host/cluster runs
// them from one durable consumer of the cluster's event stream, whose
// acknowledged position is the one cursor of the cluster); the cursors
// here are those of a single host.
//
// Where Palyra stops short (a gap between Palyra's docs and its code, item 8), Palyra-Go goes on: the
// run phases are dispatched in the call path, the event payload
// reaches the hook, a transform_preview hook's output is its preview, and
// Fire runs the bound skill itself. The daemon's CallFunc is meant to call
// the skill through host.Host.Call, so that a hook call gets the same status,
// trust and grant checks as any other call.
package hooks
