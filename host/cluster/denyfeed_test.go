package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/internal/testskill"
)

// TestDenyFeedReplicated: a deny feed given to one node is an op every
// node verifies against its own trust store and installs in its own state
// directory, quarantining the denied version on every node; a malformed
// or oversized feed is refused before anything is appended; every node's
// feed shows the same serial.
func TestDenyFeedReplicated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ms := startCluster(t, 2)
	art := skillArtifact(t, "acme.denied", "1.0.0")
	if _, err := ms[0].node.Install(ctx, host.InstallRequest{Artifact: art, TrustedPublishers: testPublisher()}); err != nil {
		t.Fatal(err)
	}
	issuer := testskill.Key(0x46)
	sum := sha256.Sum256(art)
	data, err := feed.Sign(feed.Feed{SchemaVersion: 1, Issuer: "acme-security", Serial: 1, IssuedAt: time.Now().UTC(), Entries: []feed.Entry{
		{Kind: feed.KindArtifactSHA256, Value: hex.EncodeToString(sum[:]), Reason: "cluster denial"},
	}}, issuer)
	if err != nil {
		t.Fatal(err)
	}

	before := streamLast(t, ms[0].link)
	if _, err := ms[1].node.UpdateDenyFeed(ctx, host.UpdateDenyFeedRequest{Feed: []byte("{}")}); !errors.Is(err, feed.ErrInvalidFeed) {
		t.Fatalf("malformed feed: %v, want invalid_deny_feed", err)
	}
	if _, err := ms[1].node.UpdateDenyFeed(ctx, host.UpdateDenyFeedRequest{Feed: make([]byte, MaxOpFeedBytes+1)}); !errors.Is(err, feed.ErrInvalidFeed) ||
		!strings.Contains(err.Error(), "MaxOpFeedBytes") {
		t.Fatalf("oversized feed: %v", err)
	}
	if after := streamLast(t, ms[0].link); after != before {
		t.Fatalf("the stream moved from %d to %d", before, after)
	}

	res, err := ms[1].node.UpdateDenyFeed(ctx, host.UpdateDenyFeedRequest{
		Feed: data, TrustedPublishers: []host.TrustedKey{{Publisher: "acme-security", PublicKeyHex: keyHex(issuer)}},
	})
	if err != nil || !res.Changed || res.Feed.Serial != 1 {
		t.Fatalf("update: %+v %v", res, err)
	}
	last := ms[1].node.Applied()
	for _, m := range ms {
		eventually(t, m.cfg.NodeName+" applied the feed", func() bool { return m.node.Applied() >= last })
		info, err := m.node.DenyFeed(ctx)
		if err != nil || !info.Installed || info.Serial != 1 || info.Issuer != "acme-security" {
			t.Fatalf("%s feed: %+v %v", m.cfg.NodeName, info, err)
		}
		si, err := m.node.Info(ctx, host.SkillRef{SkillID: "acme.denied"})
		if err != nil || si.Inventory.Status != "quarantined" || !strings.Contains(si.Inventory.RuntimeStatus.Reason, "cluster denial") {
			t.Fatalf("%s acme.denied: %+v %v", m.cfg.NodeName, si.Inventory, err)
		}
	}
}
