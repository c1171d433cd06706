package cluster

// The replicated truth: every lifecycle write verb of a Node is an op
// appended to OpsStream, and every node (the origin included) applies the
// ops in stream order to its own local host (apply.go). The origin waits
// until its own applier applied its op and returns the local result.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/trust"
)

// OpVersion is the version of the op envelope this node writes and reads.
const OpVersion = 1

// The kinds of ops, one per write verb of host.Service; an op's subject is
// OpsSubjectPrefix + its kind.
const (
	// OpInstall is Install: Op.ArtifactSHA256 and Op.Install.
	OpInstall = "install"
	// OpEnable is Enable: Op.Enable.
	OpEnable = "enable"
	// OpReviewApprove is ApproveReview: Op.Review.
	OpReviewApprove = "review_approve"
	// OpDisable is Disable: Op.Status.
	OpDisable = "disable"
	// OpQuarantine is Quarantine: Op.Status.
	OpQuarantine = "quarantine"
	// OpRemove is Remove: Op.Remove.
	OpRemove = "remove"
	// OpReaudit is Reaudit: every node re-audits its own copies.
	OpReaudit = "reaudit"
	// OpHookBind is BindHook: Op.Hook, its hook_id fixed by the origin.
	OpHookBind = "hook_bind"
	// OpHookEnable is SetHookEnabled: Op.HookID and Op.Enabled.
	OpHookEnable = "hook_enable"
	// OpHookRemove is RemoveHook: Op.HookID.
	OpHookRemove = "hook_remove"
	// OpTrustRotate is RotateTrust: Op.Statement, the rotation
	// statement's bytes (at most MaxOpStatementBytes).
	OpTrustRotate = "trust_rotate"
	// OpPolicySet is SetPolicy: Op.Profile, the operator profile's TOML
	// (at most MaxOpProfileBytes).
	OpPolicySet = "policy_set"
	// OpDenyFeedUpdate is UpdateDenyFeed: Op.Feed, the signed feed's
	// bytes (at most MaxOpFeedBytes).
	OpDenyFeedUpdate = "deny_feed_update"
)

// MaxOpFeedBytes bounds the deny feed a deny_feed_update op carries: the
// op is one message of the ops stream (1 MiB, the feed base64-encoded in
// it), so a clustered node refuses a larger feed before anything is
// appended (a single host takes up to feed.MaxFileBytes).
const MaxOpFeedBytes = 512 << 10

// MaxOpStatementBytes bounds the rotation statement a trust_rotate op
// carries (trust.MaxRotationSize): a larger one is refused before anything
// is appended.
const MaxOpStatementBytes = trust.MaxRotationSize

// MaxOpProfileBytes bounds the operator profile a policy_set op carries
// (policy.MaxProfileBytes): a larger one is refused before anything is
// appended.
const MaxOpProfileBytes = policy.MaxProfileBytes

// publishBudget bounds a publish, an artifact put and a stream read when
// the caller's context allows longer.
const publishBudget = 5 * time.Second

// writeBudget bounds the retries of a write (an op's append, an
// artifact's put) that found no stream leader: longer than JetStream's
// re-election after a leader's node died (its raft election timeout is
// 4 to 9 s). With no quorum at all, a write fails with
// ErrClusterUnavailable after it.
const writeBudget = 20 * time.Second

// retryUnavailable runs fn (each try bounded by publishBudget) until it
// succeeds, fails otherwise than for the cluster's unavailability, ctx
// ends or budget has passed, 250 ms apart; it returns the last error.
func retryUnavailable(ctx context.Context, budget time.Duration, fn func(context.Context) error) error {
	giveUp := time.Now().Add(budget)
	for {
		c, cancel := context.WithTimeout(ctx, publishBudget)
		err := fn(c)
		cancel()
		if err == nil || !errors.Is(Unavailable(err), ErrClusterUnavailable) || ctx.Err() != nil || time.Now().After(giveUp) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Op is one lifecycle change in OpsStream (JSON). The envelope fields are
// common to every kind; the others are set for the kinds named.
type Op struct {
	// V is the envelope's version (OpVersion).
	V int `json:"v"`
	// Kind is one of the Op* kinds.
	Kind string `json:"kind"`
	// ID is the op's random id, also its Nats-Msg-Id: a publish retried
	// within the stream's duplicate window is stored once.
	ID string `json:"id"`
	// Principal is who acted, "" when the origin's caller named nobody
	// (every node then applies its own default).
	Principal string `json:"principal,omitempty"`
	// Origin is the node that appended the op, At when (its clock).
	Origin string    `json:"origin"`
	At     time.Time `json:"at"`

	// install: the artifact's sha256 (lower-case hex; its object's name in
	// ArtifactStore) and the install request without the bytes.
	ArtifactSHA256 string          `json:"artifact_sha256,omitempty"`
	Install        *InstallOptions `json:"install,omitempty"`
	// enable, disable, quarantine.
	Enable *host.EnableRequest `json:"enable,omitempty"`
	Status *host.StatusRequest `json:"status,omitempty"`
	// review_approve.
	Review *host.ReviewRequest `json:"review,omitempty"`
	// remove.
	Remove *host.RemoveRequest `json:"remove,omitempty"`
	// hook_bind: the binding, its hook_id fixed by the origin.
	Hook *host.HookBinding `json:"hook,omitempty"`
	// hook_enable, hook_remove.
	HookID  string `json:"hook_id,omitempty"`
	Enabled bool   `json:"enabled,omitempty"`
	// trust_rotate: the rotation statement's bytes.
	Statement []byte `json:"statement,omitempty"`
	// policy_set: the profile's TOML.
	Profile []byte `json:"profile,omitempty"`
	// deny_feed_update: the signed deny feed's bytes, and the keys
	// allowlisted with it.
	Feed        []byte            `json:"feed,omitempty"`
	FeedTrusted []host.TrustedKey `json:"feed_trusted,omitempty"`
	// Quiet: the op's origin published its event already (a quarantine
	// by its anomaly detector); the nodes that apply it publish none.
	Quiet bool `json:"quiet,omitempty"`
}

// InstallOptions are an install op's InstallRequest: every field but the
// artifact, whose bytes are in ArtifactStore.
type InstallOptions struct {
	AllowTOFU          bool               `json:"allow_tofu,omitempty"`
	Force              bool               `json:"force,omitempty"`
	AcceptCapabilities bool               `json:"accept_capabilities,omitempty"`
	TrustedPublishers  []host.TrustedKey  `json:"trusted_publishers,omitempty"`
	Source             host.InstallSource `json:"source,omitzero"`
}

// Refusal is an op this node refused to apply: its artifact was missing
// from ArtifactStore or did not match the op's sha256, or the op could not
// be read. Nothing of a refused op is applied on the node.
type Refusal struct {
	// Seq is the op's sequence in OpsStream; Kind and Origin are the op's
	// (empty when it could not be read).
	Seq    uint64 `json:"seq"`
	Kind   string `json:"kind"`
	Origin string `json:"origin,omitempty"`
	// At is when this node refused it.
	At time.Time `json:"at"`
	// Code is the error's stable code (payload_hash_mismatch,
	// cluster_artifact_missing, cluster_invalid_op) and Error its text.
	Code  string `json:"code"`
	Error string `json:"error"`
}

// maxRefusals is how many refusals a node keeps (the newest).
const maxRefusals = 64

// outcome is what applying an op on this node gave.
type outcome struct {
	res any
	err error
}

// opsState is a node's part of the replicated truth: its position in the
// stream, the origin's waiters, and the refusals.
type opsState struct {
	applied  uint64 // guarded by mu
	mu       sync.Mutex
	changed  chan struct{}           // closed and replaced when applied moves
	waiters  map[string]chan outcome // op id → the origin's waiter
	refused  []Refusal               // the newest maxRefusals
	refusedN uint64
	closed   bool

	lastEvent int64              // the last local journal event id seen (applier only)
	stop      context.CancelFunc // ends the applier
}

// Applied is the last ops-stream sequence this node applied.
func (n *Node) Applied() uint64 {
	if n.ops == nil {
		return 0
	}
	n.ops.mu.Lock()
	defer n.ops.mu.Unlock()
	return n.ops.applied
}

// Refused returns the ops this node refused to apply (the newest 64, oldest
// first) and how many it refused since it started.
func (n *Node) Refused() ([]Refusal, uint64) {
	if n.ops == nil {
		return nil, 0
	}
	n.ops.mu.Lock()
	defer n.ops.mu.Unlock()
	return append([]Refusal(nil), n.ops.refused...), n.ops.refusedN
}

// newOpID returns a random op id.
func newOpID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b[:])
}

// submit appends op to the stream and waits until this node applied it,
// returning the local outcome. A publish that cannot reach a JetStream
// quorum fails with ErrClusterUnavailable and nothing is appended (or, if
// the answer was lost, the op may still be appended and is then applied
// everywhere as usual; a retry with the same id is de-duplicated).
// A context that ends while waiting returns its error; the op, appended,
// is applied anyway.
func (n *Node) submit(ctx context.Context, op Op) (any, error) {
	op.V, op.Origin, op.At = OpVersion, n.Name(), time.Now().UTC()
	if op.ID == "" {
		op.ID = newOpID()
	}
	if p, ok := host.NamedPrincipal(ctx); ok {
		op.Principal = p
	}
	data, err := json.Marshal(op)
	if err != nil {
		return nil, fmt.Errorf("cluster: encode op: %w", err)
	}
	w := make(chan outcome, 1)
	s := n.ops
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("cluster: node %s is closed: %w", n.Name(), host.ErrClosed)
	}
	s.waiters[op.ID] = w
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiters, op.ID)
		s.mu.Unlock()
	}()

	// Retried (the message id makes it safe) through a stream leader's
	// re-election after a node died, which JetStream starts seconds later.
	var ack *jetstream.PubAck
	err = retryUnavailable(ctx, writeBudget, func(c context.Context) (err error) {
		ack, err = n.link.js.Publish(c, OpsSubjectPrefix+op.Kind, data,
			jetstream.WithMsgID(op.ID), jetstream.WithExpectStream(OpsStream))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: append %s op: %w", op.Kind, Unavailable(err))
	}
	n.log.Debug("op appended", "kind", op.Kind, "seq", ack.Sequence, "op_id", op.ID, "duplicate", ack.Duplicate)
	for {
		s.mu.Lock()
		applied, changed := s.applied, s.changed
		s.mu.Unlock()
		// The applier hands the outcome over and moves applied under one
		// lock: once applied reached the op, the outcome is in w.
		select {
		case o := <-w:
			return o.res, o.err
		default:
		}
		if applied >= ack.Sequence {
			return nil, fmt.Errorf("%w: op %d (%s) was passed over on %s without its outcome", ErrInvalidOp, ack.Sequence, op.Kind, n.Name())
		}
		select {
		case o := <-w:
			return o.res, o.err
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("cluster: waiting for op %d (%s) to apply on %s: %w", ack.Sequence, op.Kind, n.Name(), ctx.Err())
		case <-n.ctx.Done():
			return nil, fmt.Errorf("cluster: node %s closed before op %d applied: %w", n.Name(), ack.Sequence, host.ErrClosed)
		}
	}
}

// result converts an outcome's result to T (nil when absent).
func result[T any](res any, err error) (*T, error) {
	t, _ := res.(*T)
	return t, err
}

// invalid is a request refused before anything is appended.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", install.ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// needSkill checks a request names a skill.
func needSkill(id string) error {
	if strings.TrimSpace(id) == "" {
		return invalid("skill_id is empty")
	}
	return nil
}

// Install implements host.Service: the artifact goes into ArtifactStore
// under its sha256, then an install op naming it is appended, and every
// node installs it after verifying it itself. An artifact object whose op
// never got appended (the publish failed) is harmless: nothing names it,
// and a later install of the same bytes reuses it.
func (n *Node) Install(ctx context.Context, req host.InstallRequest) (*host.InstallResult, error) {
	// A source is fetched by the node asked; the op carries the bytes.
	if err := host.ResolveInstallSource(ctx, n.host.Sources(), &req); err != nil {
		return nil, err
	}
	if req.DryRun {
		// A dry run changes nothing: this node's own checks answer it.
		return n.host.Install(ctx, req)
	}
	if len(req.Artifact) == 0 {
		return nil, invalid("the artifact is empty")
	}
	if len(req.Artifact) > artifact.MaxArtifactBytes {
		return nil, fmt.Errorf("%w: the artifact is %d bytes, the limit is %d bytes (MaxArtifactBytes)",
			artifact.ErrArtifactTooLarge, len(req.Artifact), artifact.MaxArtifactBytes)
	}
	if _, err := artifact.ReadBytes(req.Artifact); err != nil {
		return nil, err // not an artifact: nothing to append
	}
	sum, err := n.putArtifact(ctx, req.Artifact)
	if err != nil {
		return nil, err
	}
	tp := req.TrustedPublishers
	return result[host.InstallResult](n.submit(ctx, Op{Kind: OpInstall, ArtifactSHA256: sum, Install: &InstallOptions{
		AllowTOFU: req.AllowTOFU, Force: req.Force, AcceptCapabilities: req.AcceptCapabilities,
		TrustedPublishers: tp, Source: req.Source,
	}}))
}

// Enable implements host.Service through the ops stream.
func (n *Node) Enable(ctx context.Context, req host.EnableRequest) (*host.StatusResult, error) {
	if err := needSkill(req.SkillID); err != nil {
		return nil, err
	}
	return result[host.StatusResult](n.submit(ctx, Op{Kind: OpEnable, Enable: &req}))
}

// ApproveReview implements host.Service through the ops stream: every
// node clears the review hold of its copy and enables it.
func (n *Node) ApproveReview(ctx context.Context, req host.ReviewRequest) (*host.StatusResult, error) {
	if err := needSkill(req.SkillID); err != nil {
		return nil, err
	}
	return result[host.StatusResult](n.submit(ctx, Op{Kind: OpReviewApprove, Review: &req}))
}

// Disable implements host.Service through the ops stream.
func (n *Node) Disable(ctx context.Context, req host.StatusRequest) (*host.StatusResult, error) {
	if err := needSkill(req.SkillID); err != nil {
		return nil, err
	}
	return result[host.StatusResult](n.submit(ctx, Op{Kind: OpDisable, Status: &req}))
}

// Quarantine implements host.Service through the ops stream.
func (n *Node) Quarantine(ctx context.Context, req host.StatusRequest) (*host.StatusResult, error) {
	if err := needSkill(req.SkillID); err != nil {
		return nil, err
	}
	return result[host.StatusResult](n.submit(ctx, Op{Kind: OpQuarantine, Status: &req}))
}

// Remove implements host.Service through the ops stream.
func (n *Node) Remove(ctx context.Context, req host.RemoveRequest) (*host.RemoveResult, error) {
	if err := needSkill(req.SkillID); err != nil {
		return nil, err
	}
	return result[host.RemoveResult](n.submit(ctx, Op{Kind: OpRemove, Remove: &req}))
}

// Reaudit implements host.Service through the ops stream: every node
// re-audits its own copy; the result is this node's.
func (n *Node) Reaudit(ctx context.Context) (*host.ReauditReport, error) {
	return result[host.ReauditReport](n.submit(ctx, Op{Kind: OpReaudit}))
}

// BindHook implements host.Service through the ops stream. A binding
// without hook_id gets one here, so every node stores the same id.
func (n *Node) BindHook(ctx context.Context, b host.HookBinding) (*host.HookBinding, error) {
	if b.HookID == "" {
		b.HookID = "hook-" + newOpID()[:12]
	}
	probe := hooks.File{SchemaVersion: hooks.SchemaVersion, Entries: []hooks.Binding{b}}
	if data, err := json.Marshal(probe); err == nil {
		if _, err := hooks.Parse(data); err != nil {
			return nil, fmt.Errorf("%w: %v", hooks.ErrInvalidBinding, err)
		}
	}
	return result[host.HookBinding](n.submit(ctx, Op{Kind: OpHookBind, Hook: &b}))
}

// SetHookEnabled implements host.Service through the ops stream.
func (n *Node) SetHookEnabled(ctx context.Context, hookID string, enabled bool) (*host.HookBinding, error) {
	if strings.TrimSpace(hookID) == "" {
		return nil, fmt.Errorf("%w: hook_id is empty", hooks.ErrInvalidBinding)
	}
	return result[host.HookBinding](n.submit(ctx, Op{Kind: OpHookEnable, HookID: hookID, Enabled: enabled}))
}

// RemoveHook implements host.Service through the ops stream.
func (n *Node) RemoveHook(ctx context.Context, hookID string) error {
	if strings.TrimSpace(hookID) == "" {
		return fmt.Errorf("%w: hook_id is empty", hooks.ErrInvalidBinding)
	}
	_, err := n.submit(ctx, Op{Kind: OpHookRemove, HookID: hookID})
	return err
}

// RotateTrust implements host.Service through the ops stream: the
// statement is checked here (so a malformed one is refused before anything
// is appended), then every node applies it to its own trust store, in
// stream order, with its own replay protection and clock-skew check. The
// result is this node's.
func (n *Node) RotateTrust(ctx context.Context, req host.RotateTrustRequest) (*host.RotateTrustResult, error) {
	if len(req.Statement) == 0 {
		return nil, invalid("the rotation statement is empty")
	}
	if len(req.Statement) > MaxOpStatementBytes {
		return nil, fmt.Errorf("%w: the statement is %d bytes, the limit is %d bytes (MaxOpStatementBytes)",
			trust.ErrInvalidRotation, len(req.Statement), MaxOpStatementBytes)
	}
	rot, err := trust.ParseRotation(req.Statement)
	if err != nil {
		return nil, err
	}
	if err := rot.Verify(); err != nil {
		return nil, err
	}
	return result[host.RotateTrustResult](n.submit(ctx, Op{Kind: OpTrustRotate, Statement: req.Statement}))
}

// UpdateDenyFeed implements host.Service through the ops stream: the feed
// is parsed here (so a malformed or oversized one is refused before
// anything is appended), then every node verifies it against its own
// trust store, installs it in its own state directory and re-audits its
// own copies, in stream order. The result is this node's.
func (n *Node) UpdateDenyFeed(ctx context.Context, req host.UpdateDenyFeedRequest) (*host.DenyFeedUpdate, error) {
	if len(req.Feed) == 0 {
		return nil, invalid("the deny feed is empty")
	}
	if len(req.Feed) > MaxOpFeedBytes {
		return nil, fmt.Errorf("%w: the feed is %d bytes, the limit in a cluster is %d bytes (MaxOpFeedBytes)",
			feed.ErrInvalidFeed, len(req.Feed), MaxOpFeedBytes)
	}
	if _, err := feed.Parse(req.Feed); err != nil {
		return nil, err
	}
	return result[host.DenyFeedUpdate](n.submit(ctx, Op{Kind: OpDenyFeedUpdate, Feed: req.Feed, FeedTrusted: req.TrustedPublishers}))
}

// SetPolicy implements host.Service through the ops stream: the profile
// is parsed and validated here (so a bad one is refused before anything is
// appended), then every node writes it to its own policy file and swaps
// it live, in stream order, so every node ends with the same profile (the
// same PolicySHA256 in Cluster). The result is this node's.
func (n *Node) SetPolicy(ctx context.Context, req host.SetPolicyRequest) (*host.PolicyResult, error) {
	if len(req.Profile) == 0 {
		return nil, invalid("the profile is empty")
	}
	if len(req.Profile) > MaxOpProfileBytes {
		return nil, &policy.ProfileError{Reason: fmt.Sprintf("the profile is %d bytes, the limit is %d bytes (MaxOpProfileBytes)", len(req.Profile), MaxOpProfileBytes)}
	}
	if _, err := policy.Parse(req.Profile); err != nil {
		return nil, err
	}
	return result[host.PolicyResult](n.submit(ctx, Op{Kind: OpPolicySet, Profile: req.Profile}))
}
