package host

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/supervisor"
)

// CatalogTool is one tool that can be called now.
type CatalogTool struct {
	SkillID string `json:"skill_id"`
	Version string `json:"version"`
	// SkillName is the skill's manifest name.
	SkillName string `json:"skill_name"`
	// Tool is the manifest's [[entrypoints.tools]] entry.
	Tool manifest.Tool `json:"tool"`
	// Capabilities are the skill's manifest capabilities.
	Capabilities manifest.Capabilities `json:"capabilities"`
}

// catalog remembers when it first saw each version crashlooping in the
// supervisor, by "id@version": a version stays out of the catalog until
// its status row is written after that (an operator's enable).
type catalog struct {
	mu      sync.Mutex
	looping map[string]time.Time
	// gen and tools are the last catalog built: while the generation
	// stays the same, Tools answers from them without reading the
	// inventory (MCP servers poll it).
	gen   string
	tools []CatalogTool
}

// Tools implements Service: the tools of the current version of every
// active skill that is eligible (its compat requirements are met) and not
// crashlooping in the supervisor. The generation is the inventory
// journal's last event id (every install, enable, disable, quarantine,
// remove) with the crashlooping versions; while it stays the same the
// catalog is answered from memory.
func (h *Host) Tools(ctx context.Context) (*ToolCatalog, error) {
	if err := h.writable(); err != nil {
		return nil, err
	}
	keys := h.loopingKeys()
	last, err := h.in.Inventory().LastEventID(ctx)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	ls, err := h.in.List(ctx, install.ListOptions{CurrentOnly: true, EligibleOnly: true})
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	eligible := map[string]bool{}
	for _, l := range ls {
		eligible[l.SkillID+"@"+l.Version] = true
	}
	entries, err := h.in.Inventory().Skills(ctx, inventory.Filter{CurrentOnly: true, Status: inventory.StatusActive})
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	gen := fmt.Sprintf("%d|%s", last, strings.Join(keys, ","))
	h.catalog.mu.Lock()
	if h.catalog.gen == gen {
		out := &ToolCatalog{Generation: gen, Tools: slices.Clone(h.catalog.tools)}
		h.catalog.mu.Unlock()
		return out, nil
	}
	h.catalog.mu.Unlock()
	out := &ToolCatalog{Generation: gen, Tools: []CatalogTool{}}
	for _, e := range entries {
		k := e.SkillID + "@" + e.Version
		if !eligible[k] || e.Status == nil || h.excluded(k, e.Status.UpdatedAt) {
			continue
		}
		var m manifest.Manifest
		if err := json.Unmarshal(e.Manifest, &m); err != nil {
			return nil, fmt.Errorf("host: recorded manifest of %s %s: %w", e.SkillID, e.Version, err)
		}
		for _, t := range m.Entrypoints.Tools {
			out.Tools = append(out.Tools, CatalogTool{SkillID: e.SkillID, Version: e.Version, SkillName: m.Name, Tool: t, Capabilities: m.Capabilities})
		}
	}
	slices.SortFunc(out.Tools, func(a, b CatalogTool) int {
		return cmp.Or(cmp.Compare(a.SkillID, b.SkillID), cmp.Compare(a.Tool.ID, b.Tool.ID))
	})
	h.catalog.mu.Lock()
	h.catalog.gen, h.catalog.tools = gen, slices.Clone(out.Tools)
	h.catalog.mu.Unlock()
	return out, nil
}

// loopingKeys returns the versions the supervisor holds as crashlooping,
// sorted, noting when each was first seen.
func (h *Host) loopingKeys() []string {
	if h.sup == nil {
		return nil
	}
	var keys []string
	for _, st := range h.sup.States() {
		if st.Status == supervisor.StatusCrashLooping {
			keys = append(keys, st.SkillID+"@"+st.Version)
		}
	}
	slices.Sort(keys)
	now := time.Now()
	c := &h.catalog
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.looping == nil {
		c.looping = map[string]time.Time{}
	}
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

// excluded reports whether version k is crashlooping in the supervisor and
// its status row was not written since the catalog first saw that.
func (h *Host) excluded(k string, statusUpdated time.Time) bool {
	c := &h.catalog
	c.mu.Lock()
	defer c.mu.Unlock()
	seen, ok := c.looping[k]
	return ok && !statusUpdated.After(seen)
}
