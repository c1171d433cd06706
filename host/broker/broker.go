package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host/broker/egress"
	"github.com/palyra-go/palyra/host/channels"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/sdk/abi"
	sidecarplugin "github.com/palyra-go/palyra/sidecar/sidecarplugin"
)

// ErrCapabilityDenied is what the host reports for a call that failed after
// the broker refused one of its capability operations: the denial, not the
// guest's reaction to it, is the cause worth reporting.
var ErrCapabilityDenied = errcode.New("capability_denied", "a capability operation was denied")

// SecretStore gives the broker the values of secrets. The vault implements
// it (through the host); found is false when no value is stored.
type SecretStore interface {
	Lookup(ctx context.Context, scope, key string) (value []byte, found bool, err error)
}

// Config configures a Broker. Every backend is optional: an operation on a
// missing one is "unavailable".
type Config struct {
	// Egress performs HTTP requests.
	Egress *egress.Client
	// Secrets holds secret values.
	Secrets SecretStore
	// Storage is the key-value store of skills: the SQLite store, or the
	// cluster's JetStream key-value backend when clustered.
	Storage storage.Backend
	// Channels are the host's channels.
	Channels *channels.Registry
	// Logger receives denials (warn) and operations (debug); nil discards.
	// No secret value is ever logged.
	Logger hclog.Logger
}

// Invocation is what the host decided about one tool call, registered with
// Begin before the call reaches its sidecar.
type Invocation struct {
	ID        string
	SkillID   string
	Version   string
	ToolID    string
	Principal string
	// Grants and Limits are the decision of the operator's policy for the
	// skill version: handles resolve against Grants, quotas come from
	// Grants.HTTP and Limits.
	Grants policy.Grants
	Limits policy.Limits
}

// Denial is one refused capability operation.
type Denial struct {
	Kind    string `json:"kind"`
	Handle  int32  `json:"handle"`
	Code    string `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Usage is what one invocation did through the broker.
type Usage struct {
	CapabilityCalls  int64    `json:"capability_calls"`
	HTTPRequests     int64    `json:"http_requests"`
	EgressBytesOut   int64    `json:"egress_bytes_out"`
	EgressBytesIn    int64    `json:"egress_bytes_in"`
	SecretInjections int64    `json:"secret_injections"`
	Denials          []Denial `json:"denials,omitempty"`
}

// maxDenialsKept bounds the denials recorded on one invocation.
const maxDenialsKept = 16

type invocation struct {
	Invocation
	// st are the skill's counters, looked up once at Begin.
	st    *skillStats
	mu    sync.Mutex
	usage Usage
}

// Broker serves capability calls; it implements sidecarplugin.Broker and
// is safe for concurrent use.
type Broker struct {
	cfg Config
	log hclog.Logger

	mu    sync.Mutex
	inv   map[string]*invocation
	stats map[string]*skillStats
}

// New returns a Broker.
func New(cfg Config) *Broker {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Broker{cfg: cfg, log: cfg.Logger.Named("broker"), inv: map[string]*invocation{}, stats: map[string]*skillStats{}}
}

// Begin registers an invocation; capability calls naming its id are served
// until the returned end function is called, which returns what the
// invocation did. Begin panics on an empty or reused id: ids come from the
// host, never from a sidecar.
func (b *Broker) Begin(inv Invocation) (end func() Usage) {
	if inv.ID == "" {
		panic("broker: Begin with an empty invocation id")
	}
	b.mu.Lock()
	if _, dup := b.inv[inv.ID]; dup {
		b.mu.Unlock()
		panic("broker: Begin with an invocation id already in use")
	}
	in := &invocation{Invocation: inv, st: b.skillLocked(inv.SkillID)}
	b.inv[inv.ID] = in
	b.mu.Unlock()
	in.st.add(func(s *Stats) { s.Invocations++ })
	var once sync.Once
	return func() Usage {
		once.Do(func() {
			b.mu.Lock()
			delete(b.inv, inv.ID)
			b.mu.Unlock()
		})
		in.mu.Lock()
		defer in.mu.Unlock()
		u := in.usage
		u.Denials = append([]Denial(nil), u.Denials...)
		return u
	}
}

// Call implements sidecarplugin.Broker.
func (b *Broker) Call(ctx context.Context, req sidecarplugin.CapabilityRequest) ([]byte, error) {
	b.mu.Lock()
	in := b.inv[req.InvocationID]
	b.mu.Unlock()
	if in == nil {
		// No record: a call after its invocation ended, or a forged id.
		b.log.Warn("capability call for an unknown invocation", "skill_id", req.SkillID, "invocation_id", req.InvocationID, "kind", req.Kind)
		// The skill id is the sidecar's word: it is counted only for a
		// skill the broker already keeps counters of, so a hostile
		// sidecar cannot grow the map with made-up ids.
		b.mu.Lock()
		st := b.stats[req.SkillID]
		b.mu.Unlock()
		if st != nil {
			st.add(func(s *Stats) { s.Denials["unknown_invocation"]++ })
		}
		return nil, &sidecarplugin.CapabilityError{Code: abi.CodeDenied, Message: "no such invocation is running"}
	}
	op := &operation{b: b, in: in, req: req, log: b.log.With("skill_id", in.SkillID, "skill_version", in.Version, "tool_id", in.ToolID, "invocation_id", in.ID, "kind", string(req.Kind), "handle", req.Handle)}
	resp, err := op.run(ctx)
	if err != nil {
		return nil, op.refusal(err)
	}
	return resp, nil
}

// operation is one capability call being served.
type operation struct {
	b   *Broker
	in  *invocation
	req sidecarplugin.CapabilityRequest
	log hclog.Logger
	// secrets are the values injected into this operation: no message to
	// the guest may contain one.
	secrets [][]byte
}

func (op *operation) run(ctx context.Context) ([]byte, error) {
	in := op.in
	if op.req.SkillID != in.SkillID || (op.req.ToolID != "" && op.req.ToolID != in.ToolID) {
		return nil, deny("identity_mismatch", "the capability call names skill %q tool %q, but invocation %s runs %s tool %s", op.req.SkillID, op.req.ToolID, in.ID, in.SkillID, in.ToolID)
	}
	in.mu.Lock()
	in.usage.CapabilityCalls++
	n := in.usage.CapabilityCalls
	in.mu.Unlock()
	if max := in.Limits.MaxCapabilityCalls; max > 0 && n > max {
		return nil, refuse(abi.CodeQuotaExceeded, "capability_calls", "capability-call limit of %d per invocation reached", max)
	}
	kind, grant, err := op.resolve(op.req.Handle)
	if err != nil {
		return nil, err
	}
	if kind != op.req.Kind || (op.req.Grant != "" && op.req.Grant != grant) {
		// The sidecar resolved the handle differently: it is broken or
		// lying. Trust the host's resolution, refuse the call.
		return nil, deny("grant_mismatch", "handle %d is %s %q on the host, the sidecar sent %s %q", op.req.Handle, kind, grant, op.req.Kind, op.req.Grant)
	}
	op.in.st.add(func(s *Stats) { s.CapabilityCalls[string(kind)]++ })
	switch kind {
	case sidecarplugin.KindHTTP:
		return op.http(ctx, grant)
	case sidecarplugin.KindSecret:
		return op.secret(ctx, grant)
	case sidecarplugin.KindStorage:
		return op.storage(ctx, grant)
	case sidecarplugin.KindChannel:
		return op.channel(ctx, grant)
	}
	return nil, refuse(abi.CodeInvalidRequest, "invalid_request", "unknown capability kind")
}

// resolve maps a handle to its kind and grant with the host's own grants.
func (op *operation) resolve(h int32) (sidecarplugin.CapabilityKind, string, error) {
	g := &op.in.Grants
	for _, k := range []struct {
		kind sidecarplugin.CapabilityKind
		base int32
		list []string
	}{
		{sidecarplugin.KindHTTP, abi.HTTPHandleBase, g.HTTPHosts},
		{sidecarplugin.KindSecret, abi.SecretHandleBase, g.SecretKeys},
		{sidecarplugin.KindStorage, abi.StorageHandleBase, g.StoragePrefixes},
		{sidecarplugin.KindChannel, abi.ChannelHandleBase, g.Channels},
	} {
		if h >= k.base && h < k.base+10000 {
			i := int(h - k.base)
			if i >= len(k.list) {
				break
			}
			return k.kind, k.list[i], nil
		}
	}
	return "", "", refuse(abi.CodeNotGranted, "not_granted", "handle %d is not granted to this call", h)
}

// failure is a refusal with its ABI code and a reason for accounting.
type failure struct {
	code   abi.Code
	reason string
	msg    string
	cause  error
}

func (f *failure) Error() string { return f.msg }
func (f *failure) Unwrap() error { return f.cause }

func refuse(code abi.Code, reason, format string, args ...any) *failure {
	return &failure{code: code, reason: reason, msg: fmt.Sprintf(format, args...)}
}

func deny(reason, format string, args ...any) *failure {
	return refuse(abi.CodeDenied, reason, format, args...)
}

// refusal turns err into the CapabilityError the guest sees, and records,
// counts and logs it.
func (op *operation) refusal(err error) error {
	var f *failure
	switch {
	case errors.As(err, &f):
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		f = &failure{code: abi.CodeTimeout, reason: "timeout", msg: "the capability operation ran out of time", cause: err}
	default:
		op.log.Error("capability operation failed", "error", op.scrub(err.Error()))
		f = &failure{code: abi.CodeInternal, reason: "internal", msg: "internal host error", cause: err}
	}
	msg := op.scrub(f.msg)
	in := op.in
	if f.code == abi.CodeDenied || f.code == abi.CodeNotGranted || f.code == abi.CodeQuotaExceeded {
		op.log.Warn("capability denied", "code", f.code.String(), "reason", f.reason, "detail", msg)
		op.in.st.add(func(s *Stats) { s.Denials[f.reason]++ })
		in.mu.Lock()
		if len(in.usage.Denials) < maxDenialsKept {
			in.usage.Denials = append(in.usage.Denials, Denial{Kind: string(op.req.Kind), Handle: op.req.Handle, Code: f.code.String(), Reason: f.reason, Message: msg})
		}
		in.mu.Unlock()
	} else {
		op.log.Debug("capability operation refused", "code", f.code.String(), "reason", f.reason, "detail", msg)
		op.in.st.add(func(s *Stats) { s.Failures[f.reason]++ })
	}
	return &sidecarplugin.CapabilityError{Code: f.code, Message: msg}
}

// scrub replaces any injected secret value in s: the last line of defence
// for messages that reach the guest or a log.
func (op *operation) scrub(s string) string {
	for _, v := range op.secrets {
		if len(v) > 0 && strings.Contains(s, string(v)) {
			s = strings.ReplaceAll(s, string(v), "[redacted]")
		}
	}
	return s
}

// decodeStrict decodes one JSON object into v, refusing unknown fields and
// trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return refuse(abi.CodeInvalidRequest, "invalid_request", "request document: %v", err)
	}
	if dec.More() {
		return refuse(abi.CodeInvalidRequest, "invalid_request", "request document: data after the JSON object")
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs of strings, numbers and maps are marshalled
	}
	return b
}

// now is the clock of stats.
var now = time.Now
