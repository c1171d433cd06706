package host_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/internal/testskill"
)

// testClock is a settable clock for approvals.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// approvalHost opens a host with a test clock and profile p (nil: the
// default) and installs acme.appr (tool acme.appr.t, requires_approval)
// and acme.free (no risk flag, granted the HTTP host api.example.com),
// both running the WAT echo (its output is its input).
func approvalHost(t *testing.T, p *policy.Profile) (*host.Host, *testClock) {
	t.Helper()
	ctx := context.Background()
	clk := &testClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	sock, err := os.MkdirTemp("", "hs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	cfg := host.Config{StateDir: t.TempDir(), SidecarPath: sidecarPath, Policy: p, Clock: clk.Now, ApprovalTTL: 5 * time.Minute}
	cfg.Supervisor.SocketDir = sock
	h, err := host.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	wasm, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "echo.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	key := testskill.Key(7)
	pub := hex.EncodeToString(key.Public().(ed25519.PublicKey))
	appr := strings.Replace(testskill.OneToolManifest("acme.appr", "1.0.0", ""), "requires_approval = false", "requires_approval = true", 1)
	free := testskill.WithHosts(testskill.OneToolManifest("acme.free", "1.0.0", ""), "api.example.com")
	for _, m := range []string{appr, free} {
		if _, err := h.Install(ctx, host.InstallRequest{Artifact: testskill.Build(t, m, wasm, key), TrustedPublishers: []host.TrustedKey{{Publisher: "acme", PublicKeyHex: pub}}}); err != nil {
			t.Fatal(err)
		}
	}
	return h, clk
}

// pendingCall calls and expects the call to wait for approval.
func pendingCall(t *testing.T, h *host.Host, ctx context.Context, req host.CallRequest) *host.PendingApproval {
	t.Helper()
	res, err := h.Call(ctx, req)
	if !errors.Is(err, host.ErrApprovalPending) || errcode.Of(err) != "approval_pending" {
		t.Fatalf("call %s: err = %v, want approval_pending", req.ToolID, err)
	}
	pa := host.PendingApprovalOf(err)
	if pa == nil || res == nil || res.Pending == nil || res.Pending.ID != pa.ID || res.Output != nil || res.InvocationID != "" {
		t.Fatalf("pending call: result %+v, pending %+v", res, pa)
	}
	if !strings.HasPrefix(pa.ID, "apr_") || len(pa.ID) != 36 {
		t.Fatalf("approval id %q is not apr_ and 128 random bits", pa.ID)
	}
	return pa
}

func TestApprovalLifecycle(t *testing.T) {
	h, clk := approvalHost(t, nil)
	alice := host.WithPrincipal(context.Background(), "alice")
	bob := host.WithPrincipal(context.Background(), "bob")
	call := host.CallRequest{SkillID: "acme.appr", ToolID: "acme.appr.t", Input: json.RawMessage(`{"b": 2, "a": [1, 2.50]}`)}

	pa := pendingCall(t, h, alice, call)
	if pa.SkillID != "acme.appr" || pa.Version != "1.0.0" || pa.ToolID != "acme.appr.t" || !pa.ExpiresAt.Equal(clk.Now().Add(5*time.Minute)) {
		t.Fatalf("pending = %+v", pa)
	}
	if !slices.Equal(pa.Reasons, []host.ApprovalReason{{Kind: "manifest", Detail: "requires_approval"}}) {
		t.Fatalf("reasons = %v", pa.Reasons)
	}
	// Asking again for the same call waits on the same approval.
	if again := pendingCall(t, h, alice, call); again.ID != pa.ID {
		t.Fatalf("second ask made approval %s, want %s again", again.ID, pa.ID)
	}
	// A call that needs no approval runs at once.
	if _, err := h.Call(alice, host.CallRequest{SkillID: "acme.free", ToolID: "acme.free.t", Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("call of a tool that needs no approval: %v", err)
	}
	// Using it before a decision: still pending.
	withID := call
	withID.ApprovalID = pa.ID
	if _, err := h.Call(alice, withID); !errors.Is(err, host.ErrApprovalPending) {
		t.Fatalf("call with an undecided approval: %v, want approval_pending", err)
	}
	list, err := h.Approvals(bob, host.ApprovalsRequest{State: host.ApprovalPending})
	if err != nil || list.Count != 1 || list.Approvals[0].ID != pa.ID {
		t.Fatalf("pending list = %+v, %v", list, err)
	}
	if a := list.Approvals[0]; a.RequestedBy != "alice" || string(a.Input) != `{"a":[1,2.50],"b":2}` || a.Grants == nil {
		t.Fatalf("listed approval = %+v (input %s)", a, a.Input)
	}
	if _, err := h.DecideApproval(bob, host.DecideRequest{ID: pa.ID}); !errors.Is(err, host.ErrBadRequest) {
		t.Fatalf("deny without a reason: %v, want bad_request", err)
	}
	got, err := h.DecideApproval(bob, host.DecideRequest{ID: pa.ID, Approve: true, Reason: "looks fine"})
	if err != nil || got.State != host.ApprovalApproved || got.DecidedBy != "bob" {
		t.Fatalf("approve = %+v, %v", got, err)
	}
	if _, err := h.DecideApproval(bob, host.DecideRequest{ID: pa.ID, Reason: "changed my mind"}); !errors.Is(err, host.ErrApprovalDecided) {
		t.Fatalf("second decision: %v, want approval_already_decided", err)
	}
	// The changed input is refused; the approval stays usable.
	changed := withID
	changed.Input = json.RawMessage(`{"b": 3, "a": [1, 2.50]}`)
	if _, err := h.Call(alice, changed); !errors.Is(err, host.ErrApprovalInputMismatch) {
		t.Fatalf("call with changed input: %v, want approval_input_mismatch", err)
	}
	if _, err := h.Call(alice, host.CallRequest{SkillID: "acme.appr", ToolID: "acme.appr.t", Input: json.RawMessage(`{}`), ApprovalID: "apr_nope"}); !errors.Is(err, host.ErrApprovalNotFound) {
		t.Fatalf("unknown approval: %v", err)
	}
	// Same document, other spelling: runs, once, with the approved input.
	same := withID
	same.Input = json.RawMessage(`{"a":[1,2.50],"b":2}`)
	res, err := h.Call(alice, same)
	if err != nil {
		t.Fatalf("approved call: %v", err)
	}
	var doc struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(res.Output, &doc); err != nil || string(doc.Input) != `{"a":[1,2.50],"b":2}` || res.Pending != nil {
		t.Fatalf("approved call ran with input %s (output %s)", doc.Input, res.Output)
	}
	if _, err := h.Call(alice, same); !errors.Is(err, host.ErrApprovalUsed) {
		t.Fatalf("second use: %v, want approval_used", err)
	}

	// Denied: the call fails with the reason.
	call2 := host.CallRequest{SkillID: "acme.appr", ToolID: "acme.appr.t", Input: json.RawMessage(`{"x":1}`)}
	pb := pendingCall(t, h, alice, call2)
	if _, err := h.DecideApproval(bob, host.DecideRequest{ID: pb.ID, Reason: "not today"}); err != nil {
		t.Fatal(err)
	}
	call2.ApprovalID = pb.ID
	if _, err := h.Call(alice, call2); !errors.Is(err, host.ErrApprovalDenied) || !strings.Contains(err.Error(), "not today") || !strings.Contains(err.Error(), "bob") {
		t.Fatalf("denied call: %v", err)
	}

	// Expiry: undecided past its TTL, or approved and not used in time.
	call3 := host.CallRequest{SkillID: "acme.appr", ToolID: "acme.appr.t", Input: json.RawMessage(`{"y":1}`)}
	pc := pendingCall(t, h, alice, call3)
	call4 := host.CallRequest{SkillID: "acme.appr", ToolID: "acme.appr.t", Input: json.RawMessage(`{"z":1}`)}
	pd := pendingCall(t, h, alice, call4)
	if _, err := h.DecideApproval(bob, host.DecideRequest{ID: pd.ID, Approve: true}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5*time.Minute - time.Millisecond)
	if a, err := h.Approval(bob, pc.ID); err != nil || a.State != host.ApprovalPending {
		t.Fatalf("just before expiry: %+v, %v", a, err)
	}
	clk.Advance(time.Millisecond)
	if _, err := h.DecideApproval(bob, host.DecideRequest{ID: pc.ID, Approve: true}); !errors.Is(err, host.ErrApprovalExpired) {
		t.Fatalf("decision after expiry: %v, want approval_expired", err)
	}
	call4.ApprovalID = pd.ID
	if _, err := h.Call(alice, call4); !errors.Is(err, host.ErrApprovalExpired) {
		t.Fatalf("use after expiry: %v, want approval_expired", err)
	}
	if list, err := h.Approvals(bob, host.ApprovalsRequest{State: host.ApprovalExpired}); err != nil || list.Count != 2 {
		t.Fatalf("expired list = %+v, %v", list, err)
	}

	// The journal has every request and decision, with the principal.
	var got2 []string
	if err := h.Events(context.Background(), host.EventsRequest{After: 0}, func(e host.Event) error {
		if strings.Contains(e.Kind, "approval") {
			got2 = append(got2, e.Kind+"/"+e.Principal)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"skill:approval_requested/alice", "skill:approval_approved/bob", "skill:approval_used/alice",
		"skill:approval_requested/alice", "skill:approval_denied/bob",
		"skill:approval_requested/alice", "skill:approval_requested/alice", "skill:approval_approved/bob",
		"skill:approval_expired/system:approvals", "skill:approval_expired/system:approvals",
	}
	if !slices.Equal(got2, want) {
		t.Fatalf("journal:\n%s\nwant\n%s", strings.Join(got2, "\n"), strings.Join(want, "\n"))
	}
}

func TestApprovalProfileClasses(t *testing.T) {
	p := policy.Default()
	p.Capabilities.RequireApproval = []string{"http", "channels"}
	h, _ := approvalHost(t, p)
	ctx := context.Background()
	pa := pendingCall(t, h, ctx, host.CallRequest{SkillID: "acme.free", ToolID: "acme.free.t", Input: json.RawMessage(`{}`)})
	if !slices.Equal(pa.Reasons, []host.ApprovalReason{{Kind: "profile", Detail: "http"}}) {
		t.Fatalf("reasons = %v, want profile http only (no channel is granted)", pa.Reasons)
	}
	pb := pendingCall(t, h, ctx, host.CallRequest{SkillID: "acme.appr", ToolID: "acme.appr.t", Input: json.RawMessage(`{}`)})
	if !slices.Equal(pb.Reasons, []host.ApprovalReason{{Kind: "manifest", Detail: "requires_approval"}}) {
		t.Fatalf("reasons = %v, want the manifest's only (acme.appr reaches nothing)", pb.Reasons)
	}
}

// TestApprovalHookCallsExempt: a hook's call of a tool that needs
// approval runs; it makes no pending approval.
func TestApprovalHookCallsExempt(t *testing.T) {
	h, _ := approvalHost(t, nil)
	ctx := context.Background()
	if _, err := h.BindHook(ctx, host.HookBinding{HookID: "h1", Event: "skill:enabled", PluginID: "acme.appr", ToolID: "acme.appr.t", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	fr, err := h.FireHooks(ctx, host.FireRequest{Event: "skill:enabled"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fr.Outcomes) != 1 || fr.Outcomes[0].Code == "approval_pending" || len(fr.Outcomes[0].Output) == 0 {
		t.Fatalf("hook outcomes = %+v, want the tool run", fr.Outcomes)
	}
	if list, err := h.Approvals(ctx, host.ApprovalsRequest{}); err != nil || list.Count != 0 {
		t.Fatalf("approvals after a hook call = %+v, %v", list, err)
	}
}

func TestApprovalTTLBounds(t *testing.T) {
	for _, d := range []time.Duration{time.Second, 8 * 24 * time.Hour, -time.Minute} {
		_, err := host.Open(context.Background(), host.Config{StateDir: t.TempDir(), ApprovalTTL: d})
		if !errors.Is(err, host.ErrBadRequest) {
			t.Errorf("ApprovalTTL %s: %v, want bad_request", d, err)
		}
	}
}

func TestHookApprovalReason(t *testing.T) {
	for _, tc := range []struct{ hook, reason, want string }{
		{"guard", "amount over 1000", "guard: amount over 1000"},
		{"guard", "  ", "guard"},
	} {
		if got := host.HookApprovalReason(tc.hook, tc.reason); got != (host.ApprovalReason{Kind: "hook", Detail: tc.want}) {
			t.Errorf("HookApprovalReason(%q, %q) = %+v, want hook %q", tc.hook, tc.reason, got, tc.want)
		}
	}
}
