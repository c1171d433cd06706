package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
)

// listTable is the text of skills list: one row per installed version
// with what a person scans (which skill, which version, may it run, how
// many tools), and with -o wide where it came from and its digests.
func listTable(entries []install.Listing, wide bool) string {
	t := output.NewTable(
		output.Column{Header: "skill"}, output.Column{Header: "version"}, output.Column{Header: "publisher"},
		output.Column{Header: "current"}, output.Column{Header: "status"}, output.Column{Header: "eligibility"},
		output.Column{Header: "tools"}, output.Column{Header: "trust"},
		output.Column{Header: "name", Wide: true}, output.Column{Header: "installed", Wide: true},
		output.Column{Header: "reason", Wide: true}, output.Column{Header: "payload_sha256", Wide: true},
	)
	for _, l := range entries {
		current := ""
		if l.Current {
			current = "*"
		}
		t.Row(l.SkillID, l.Version, l.Publisher, dashIfEmpty(current), l.Status, l.Eligibility.Status, l.ToolCount, l.TrustDecision,
			l.SkillName, msTime(l.InstalledAtMS), l.RuntimeStatus.Reason, l.PayloadSHA256)
	}
	return t.String(wide)
}

// dashIfEmpty is "-" for an empty cell that means "no", so that a quoted
// "" is kept for values that are really empty.
func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// msTime is a Unix millisecond time in UTC, RFC 3339 to the second; ""
// for zero.
func msTime(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

// evTime is an event's time in UTC, RFC 3339 to the second.
func evTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// infoText is the text of skills info: the version's record, its tools
// with their descriptions (what to pass to skills run), its grants, held
// back versions, entries, recent history and sidecars, as labelled blocks.
func infoText(info *host.SkillInfo, sidecars []host.SidecarState, wide bool) string {
	l := info.Inventory
	bl := output.NewBlock()
	bl.Field("Skill", l.SkillID)
	if l.SkillName != "" {
		bl.Field("Name", l.SkillName)
	}
	bl.Field("Version", l.Version)
	bl.Field("Publisher", l.Publisher)
	bl.Field("Current", l.Current)
	bl.Field("Status", l.Status)
	if l.RuntimeStatus.Reason != "" {
		bl.Field("Reason", l.RuntimeStatus.Reason)
	}
	if l.RuntimeStatus.Principal != "" {
		bl.Field("Changed by", l.RuntimeStatus.Principal)
	}
	elig := string(l.Eligibility.Status)
	if len(l.Eligibility.Reasons) > 0 {
		elig += " (" + strings.Join(l.Eligibility.Reasons, "; ") + ")"
	}
	bl.Field("Eligibility", elig)
	bl.Field("Trust", l.TrustDecision)
	bl.Field("Key id", l.SignatureKeyID)
	bl.Field("Installed", msTime(l.InstalledAtMS))
	if l.Source.Ref != "" {
		bl.Field("Source", l.Source.Ref)
	}
	bl.Field("Payload sha256", l.PayloadSHA256)
	bl.Field("Artifact sha256", l.ArtifactSHA256)
	if info.CachedArtifactPath != "" {
		bl.Field("Artifact", info.CachedArtifactPath)
	}
	if info.ArtifactError != "" {
		bl.Field("Artifact error", fmt.Sprintf("%s [%s]", info.ArtifactError, info.ArtifactErrorCode))
	}
	var missing []string
	for _, s := range l.MissingSecrets {
		missing = append(missing, s.Scope+"/"+s.Key)
	}
	if len(missing) > 0 {
		bl.Field("Missing secrets", strings.Join(missing, ", "))
	}
	if len(l.MissingConfig) > 0 {
		bl.Field("Missing config", strings.Join(l.MissingConfig, ", ")+" (palyra skills config set "+l.SkillID+" KEY=VALUE)")
	}
	for _, u := range l.UnfitConfig {
		bl.Field("Unfit config", u.Key+": "+u.Reason)
	}

	bl.Section("Tools", toolsTable(info.Manifest, l.SkillID))
	bl.Section("Grants", grantsText(info.Grants))
	if info.GrantsChanged {
		bl.Section("Grants changed since install (the current policy profile differs)", strings.Join(info.GrantsChanges, "\n"))
	}
	if len(info.GrantsRefused) > 0 {
		bl.Section("Refused by the current policy profile (calls fail until it allows them)", strings.Join(info.GrantsRefused, "\n"))
	}

	if len(info.HeldBack) > 0 {
		t := output.NewTable(output.Column{Header: "version"}, output.Column{Header: "status"}, output.Column{Header: "code"}, output.Column{Header: "message"})
		for _, h := range info.HeldBack {
			t.Row(h.Version, h.Status, h.Code, h.Message)
		}
		bl.Section("Held back", t.String(false))
	}
	if len(sidecars) > 0 {
		var lines []string
		for _, st := range sidecars {
			lines = append(lines, strings.TrimSpace(sidecarText(st)))
		}
		bl.Section("Sidecars", strings.Join(lines, "\n"))
	}
	if len(info.StatusHistory) > 0 {
		t := output.NewTable(output.Column{Header: "when"}, output.Column{Header: "event"}, output.Column{Header: "version"},
			output.Column{Header: "by"}, output.Column{Header: "reason"})
		hist := info.StatusHistory
		if !wide && len(hist) > 5 {
			hist = hist[len(hist)-5:]
		}
		for _, e := range hist {
			t.Row(evTime(e.At), e.Kind, e.Version, e.Principal, e.Reason)
		}
		heading := "History"
		if len(hist) < len(info.StatusHistory) {
			heading = fmt.Sprintf("History (last %d of %d; -o wide for all)", len(hist), len(info.StatusHistory))
		}
		bl.Section(heading, t.String(false))
	}
	if wide {
		t := output.NewTable(output.Column{Header: "path"}, output.Column{Header: "bytes"}, output.Column{Header: "sha256"})
		for _, e := range info.ArtifactEntries {
			t.Row(e.Path, e.Bytes, e.SHA256)
		}
		bl.Section("Entries", t.String(false))
	} else if n := len(info.ArtifactEntries); n > 0 {
		bl.Field("Entries", fmt.Sprintf("%d (-o wide lists them)", n))
	}
	return bl.String()
}

// toolsTable lists the tools of a recorded manifest with their
// descriptions and risk flags, and how to run the first one.
func toolsTable(raw json.RawMessage, skillID string) string {
	if len(raw) == 0 {
		return ""
	}
	var m manifest.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return "(the recorded manifest cannot be read: " + err.Error() + ")"
	}
	if len(m.Entrypoints.Tools) == 0 {
		return ""
	}
	t := output.NewTable(output.Column{Header: "tool"}, output.Column{Header: "approval"}, output.Column{Header: "sensitive"}, output.Column{Header: "description"})
	for _, tl := range m.Entrypoints.Tools {
		desc := tl.Description
		if tl.HooksOnly {
			// Not offered over MCP nor in the console's Run list.
			desc = "(hooks only) " + desc
		}
		t.Row(tl.ID, yesNo(tl.Risk.RequiresApproval), yesNo(tl.Risk.DefaultSensitive), desc)
	}
	first := m.Entrypoints.Tools[0].ID
	for _, tl := range m.Entrypoints.Tools {
		if !tl.HooksOnly {
			first = tl.ID
			break
		}
	}
	return t.String(false) + fmt.Sprintf("run one with: palyra skills run %s %s --input JSON", skillID, first)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// grantsText is what the version is granted, one line per kind it has:
// under the current profile, as skills info reports it.
func grantsText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var g policy.Grants
	if err := json.Unmarshal(raw, &g); err != nil {
		return "(the recorded grants cannot be read: " + err.Error() + ")"
	}
	bl := output.NewBlock()
	n := 0
	list := func(label string, v []string) {
		if len(v) > 0 {
			bl.Field(label, strings.Join(v, ", "))
			n++
		}
	}
	list("HTTP hosts", g.HTTPHosts)
	list("Secrets", g.SecretKeys)
	list("Storage", g.StoragePrefixes)
	list("Storage (read-only)", g.StorageReadOnly)
	list("Channels", g.Channels)
	list("Device", g.DeviceCapabilities)
	list("Node", g.NodeCapabilities)
	if n == 0 {
		return "nothing beyond computing on its input"
	}
	return bl.String()
}
