package cluster

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/trust"
	"github.com/palyra-go/palyra/internal/testskill"
)

// trustedKeys reads the keys m's trust store allowlists for publisher.
func trustedKeys(t *testing.T, m *member, publisher string) []string {
	t.Helper()
	s, err := trust.OpenFile(filepath.Join(m.state, "skills", "trust-store.json")).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.TrustedKeys(publisher)
}

func keyHex(k ed25519.PrivateKey) string { return hex.EncodeToString(k.Public().(ed25519.PublicKey)) }

func rotationStatement(t *testing.T, from, to ed25519.PrivateKey, at time.Time) []byte {
	t.Helper()
	r, err := trust.NewRotation("acme", from, to, at, "test")
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTrustAndPolicyReplicated: a rotation statement or an operator
// profile given to one node is an op every node applies to its own trust
// store or policy, a malformed one is refused before anything is
// appended, and a node closed meanwhile applies what it missed when it
// reopens.
func TestTrustAndPolicyReplicated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ms := startCluster(t, 3)
	if _, err := ms[0].node.Install(ctx, host.InstallRequest{Artifact: skillArtifact(t, "acme.rot", "1.0.0"), TrustedPublishers: testPublisher()}); err != nil {
		t.Fatal(err)
	}
	key1, key2 := testskill.Key(8), testskill.Key(9)
	at := time.Now().Add(-time.Hour)

	t.Run("every node applies the rotation", func(t *testing.T) {
		res, err := ms[0].node.RotateTrust(ctx, host.RotateTrustRequest{Statement: rotationStatement(t, testKey, key1, at)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Publisher != "acme" || res.Outcome != string(trust.RotationAllowlistKeyReplaced) {
			t.Fatalf("result %+v", res)
		}
		last := ms[0].node.Applied()
		for _, m := range ms {
			eventually(t, m.cfg.NodeName+" applied the rotation", func() bool { return m.node.Applied() >= last })
			if got := trustedKeys(t, m, "acme"); !slices.Equal(got, []string{keyHex(key1)}) {
				t.Fatalf("%s trusts %v, want only the new key %s", m.cfg.NodeName, got, keyHex(key1))
			}
		}
	})

	t.Run("a malformed statement is refused before anything is appended", func(t *testing.T) {
		before := streamLast(t, ms[0].link)
		_, err := ms[1].node.RotateTrust(ctx, host.RotateTrustRequest{Statement: []byte(`{"schema_version":1}`)})
		if !errors.Is(err, trust.ErrInvalidRotation) {
			t.Fatalf("err %v, want invalid_rotation", err)
		}
		big := make([]byte, MaxOpStatementBytes+1)
		if _, err := ms[1].node.RotateTrust(ctx, host.RotateTrustRequest{Statement: big}); !errors.Is(err, trust.ErrInvalidRotation) {
			t.Fatalf("oversized: err %v, want invalid_rotation", err)
		}
		if after := streamLast(t, ms[0].link); after != before {
			t.Fatalf("the stream moved from %d to %d", before, after)
		}
	})

	t.Run("every node applies the policy", func(t *testing.T) {
		res, err := ms[0].node.SetPolicy(ctx, host.SetPolicyRequest{Profile: []byte("[quotas]\nmax_wall_clock_ms = 30000\n")})
		if err != nil {
			t.Fatal(err)
		}
		last := ms[0].node.Applied()
		for _, m := range ms {
			eventually(t, m.cfg.NodeName+" applied the policy", func() bool { return m.node.Applied() >= last })
			if got := m.host.PolicySHA256(); got != res.SHA256 {
				t.Fatalf("%s judges by policy %s, want %s", m.cfg.NodeName, got, res.SHA256)
			}
		}
		eventually(t, "node 0 sees every node's heartbeat with the new policy", func() bool {
			st, err := ms[0].node.Cluster(ctx)
			if err != nil || len(st.Nodes) != len(ms) {
				return false
			}
			for _, n := range st.Nodes {
				if n.PolicySHA256 != res.SHA256 {
					return false
				}
			}
			return true
		})
		if _, err := ms[1].node.SetPolicy(ctx, host.SetPolicyRequest{Profile: []byte("[quotas]\nbogus = 1\n")}); !errors.Is(err, policy.ErrInvalidProfile) {
			t.Fatalf("invalid profile: err %v, want invalid_policy_profile", err)
		}
	})

	t.Run("a node closed meanwhile catches up when it reopens", func(t *testing.T) {
		m := ms[2]
		m.closeNode(t)
		pol, err := ms[1].node.SetPolicy(ctx, host.SetPolicyRequest{Profile: []byte("[quotas]\nmax_wall_clock_ms = 20000\n")})
		if err != nil {
			t.Fatal(err)
		}
		res, err := ms[1].node.RotateTrust(ctx, host.RotateTrustRequest{Statement: rotationStatement(t, key1, key2, at.Add(time.Minute))})
		if err != nil || res.Outcome != string(trust.RotationAllowlistKeyReplaced) {
			t.Fatalf("rotate: %+v, %v", res, err)
		}
		openMember(t, m)
		for _, m := range ms {
			if got := trustedKeys(t, m, "acme"); !slices.Equal(got, []string{keyHex(key2)}) {
				t.Fatalf("%s trusts %v, want only %s", m.cfg.NodeName, got, keyHex(key2))
			}
			if got := m.host.PolicySHA256(); got != pol.SHA256 {
				t.Fatalf("%s judges by policy %s, want %s", m.cfg.NodeName, got, pol.SHA256)
			}
		}
		// A stale statement (issued before the last one) is the local
		// trust store's ordinary refusal, on the origin as everywhere.
		_, err = ms[0].node.RotateTrust(ctx, host.RotateTrustRequest{Statement: rotationStatement(t, key2, key1, at.Add(-time.Minute))})
		if !errors.Is(err, trust.ErrRotationReplayed) {
			t.Fatalf("stale statement: err %v, want rotation_replayed", err)
		}
	})
}
