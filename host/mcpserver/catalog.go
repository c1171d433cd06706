package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/supervisor"
)

// Catalog is what the server needs to know about the skills: the tools it
// serves and a cheap way to tell that they may have changed.
type Catalog interface {
	// Tools returns the tools of every active skill, in any order.
	Tools(ctx context.Context) ([]Tool, error)
	// Generation returns a value that differs from the last one whenever
	// Tools may return something else. The server polls it; it must be
	// cheap.
	Generation(ctx context.Context) (string, error)
}

// HostCatalog is the Catalog of a host: the tools of the current version of
// every skill that is active (status row active), eligible (its manifest's
// compat requirements are met: install.Listing's eligibility) and not
// crashlooping in the host's supervisor. Its generation is the inventory
// journal's last event id (every install, enable, disable, quarantine,
// crashlooping mark and removal journals an event, whichever process makes
// it) and the set of versions the supervisor holds as crashlooping.
//
// A version the supervisor holds as crashlooping is left out until its
// status row is written after the catalog first saw it crashlooping (an
// operator's `skills enable`): the host then resets the supervisor's crash
// history on the next call (host.Host.Call).
func HostCatalog(h *host.Host) Catalog { return &hostCatalog{h: h, looping: map[string]time.Time{}} }

type hostCatalog struct {
	h *host.Host

	mu sync.Mutex
	// looping is when the catalog first saw a version crashlooping in the
	// supervisor, by "id@version".
	looping map[string]time.Time
}

// loopingKeys returns the versions the supervisor holds as crashlooping,
// sorted, noting when each was first seen.
func (c *hostCatalog) loopingKeys() []string {
	sup := c.h.Supervisor()
	if sup == nil {
		return nil
	}
	var keys []string
	for _, st := range sup.States() {
		if st.Status == supervisor.StatusCrashLooping {
			keys = append(keys, st.SkillID+"@"+st.Version)
		}
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if _, ok := c.looping[k]; !ok {
			c.looping[k] = now
		}
	}
	for k := range c.looping {
		if !slices.Contains(keys, k) {
			delete(c.looping, k)
		}
	}
	return keys
}

func (c *hostCatalog) Generation(ctx context.Context) (string, error) {
	last, err := c.h.Installer().Inventory().LastEventID(ctx)
	if err != nil {
		return "", fmt.Errorf("mcpserver: %w", err)
	}
	return fmt.Sprintf("%d|%s", last, strings.Join(c.loopingKeys(), ",")), nil
}

func (c *hostCatalog) Tools(ctx context.Context) ([]Tool, error) {
	c.loopingKeys()
	ls, err := c.h.Installer().List(ctx, install.ListOptions{CurrentOnly: true, EligibleOnly: true})
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	eligible := map[string]bool{}
	for _, l := range ls {
		eligible[l.SkillID+"@"+l.Version] = true
	}
	entries, err := c.h.Installer().Inventory().Skills(ctx, inventory.Filter{CurrentOnly: true, Status: inventory.StatusActive})
	if err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	var out []Tool
	for _, e := range entries {
		k := e.SkillID + "@" + e.Version
		if !eligible[k] || e.Status == nil || c.excluded(k, e.Status.UpdatedAt) {
			continue
		}
		var m manifest.Manifest
		if err := json.Unmarshal(e.Manifest, &m); err != nil {
			return nil, fmt.Errorf("mcpserver: recorded manifest of %s %s: %w", e.SkillID, e.Version, err)
		}
		for _, t := range m.Entrypoints.Tools {
			out = append(out, Tool{SkillID: e.SkillID, Version: e.Version, SkillName: m.Name, Tool: t, Capabilities: m.Capabilities})
		}
	}
	slices.SortFunc(out, func(a, b Tool) int {
		return cmp.Or(cmp.Compare(a.SkillID, b.SkillID), cmp.Compare(a.Tool.ID, b.Tool.ID))
	})
	return out, nil
}

// excluded reports whether version k is crashlooping in the supervisor and
// its status row was not written since the catalog first saw that.
func (c *hostCatalog) excluded(k string, statusUpdated time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen, ok := c.looping[k]
	return ok && !statusUpdated.After(seen)
}
