package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/feed"
	"github.com/palyra-go/palyra/host/manifest"
	"github.com/palyra-go/palyra/host/policy"
)

// Defaults of Options: Palyra's SkillSecurityAuditPolicy.
const (
	// DefaultMaxModuleBytes is the largest module the audit admits: 8 MiB.
	DefaultMaxModuleBytes = 8 << 20
	// DefaultMaxExportedFunctions is the most functions a module may
	// export.
	DefaultMaxExportedFunctions = 128
)

// Input is what Audit examines: an artifact that already passed
// verification, and the operator's policy.
type Input struct {
	// Inspection is the verified artifact (artifact.VerifyReport's
	// Inspection): its manifest, signature, payload hash, warnings and
	// entries. Required.
	Inspection *artifact.Inspection
	// TrustDecision is the trust decision of verification
	// (artifact.VerifyReport.TrustDecision: allowlisted, tofu_pinned or
	// tofu_newly_pinned). Required: the audit describes an artifact whose
	// publisher key was judged, and fails closed without one.
	TrustDecision string
	// Profile is the operator's capability profile; nil means
	// policy.Default(). Its violations are failed checks, its limits bound
	// memories and tables, and its [capabilities] allow_device and
	// allow_wildcards give the report policy's two allow flags.
	Profile *policy.Profile
	// Options tune the audit; the zero value is Palyra's default policy.
	Options Options
	// ArtifactSHA256 is the hex SHA-256 of the .palyra-skill file, matched
	// against the deny feed's artifact_sha256 entries; "" matches none.
	ArtifactSHA256 string
	// DenyFeed is the installed deny feed, already verified against the
	// trust store (feed.Load); nil when none is installed. A match fails
	// vulnerability_feed_hook with the entry's reason and reference.
	DenyFeed *feed.Signed
	// DenyFeedError is why the installed deny feed could not be loaded
	// (it no longer verifies, it is corrupt): vulnerability_feed_hook
	// fails with it, since what the feed denies is unknown (fail closed).
	DenyFeedError error
}

// Options tune the audit. Every zero field takes its default.
type Options struct {
	// MaxModuleBytes bounds each module's size. Default
	// DefaultMaxModuleBytes (8 MiB).
	MaxModuleBytes uint64
	// MaxExportedFunctions bounds the functions each module exports.
	// Default DefaultMaxExportedFunctions (128). Negative is invalid.
	MaxExportedFunctions int
	// ModuleLimits are the structural limits of the wasm_module_complexity
	// check; zero fields take DefaultModuleLimits.
	ModuleLimits ModuleLimits
	// Now gives the report's generated_at_unix_ms; nil means time.Now.
	// Fix it to get byte-identical reports.
	Now func() time.Time
}

// Audit runs the static security audit on a verified artifact and returns
// its report. Every finding is a check in the report, and any failed check
// means the skill must be quarantined (Report.Passed, Report.Err). The
// error is non-nil only when the input is unusable: a nil inspection or
// manifest, a missing trust decision or negative options (ErrInvalidInput),
// an invalid profile (wrapping policy.ErrInvalidProfile), or ctx done.
//
// Audit reads module bytes with host/internal/wasmbin under its default limits, so
// its time and memory are linear in the size of the modules; ctx is checked
// between modules. It modifies nothing it is given and is safe for
// concurrent use. With a fixed Options.Now, the same
// input gives a Report whose JSON encoding is identical byte for byte.
func Audit(ctx context.Context, in Input) (*Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	insp := in.Inspection
	if insp == nil || insp.Manifest == nil {
		return nil, fmt.Errorf("%w: no verified inspection (with its manifest) given", ErrInvalidInput)
	}
	if strings.TrimSpace(in.TrustDecision) == "" {
		return nil, fmt.Errorf("%w: no trust decision given: audit only artifacts that passed verification", ErrInvalidInput)
	}
	opts := in.Options
	if opts.MaxExportedFunctions < 0 {
		return nil, fmt.Errorf("%w: max_exported_functions %d is negative", ErrInvalidInput, opts.MaxExportedFunctions)
	}
	if opts.MaxModuleBytes == 0 {
		opts.MaxModuleBytes = DefaultMaxModuleBytes
	}
	if opts.MaxExportedFunctions == 0 {
		opts.MaxExportedFunctions = DefaultMaxExportedFunctions
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	prof := in.Profile
	if prof == nil {
		prof = policy.Default()
	}
	decision, err := prof.Evaluate(insp.Manifest)
	if err != nil {
		return nil, fmt.Errorf("audit: evaluate the operator profile: %w", err)
	}

	m := insp.Manifest
	warnings := insp.Warnings
	if warnings == nil {
		warnings = m.Warnings()
	}
	a := &auditor{
		m:        m,
		decision: decision,
		// Evaluate validated the profile, so the cap is at least one page.
		profileMaxMemory: uint64(prof.Quotas.MaxMemoryBytes),
		moduleLimits:     opts.ModuleLimits.withDefaults(),
		policy: Policy{
			MaxModuleBytes:            opts.MaxModuleBytes,
			MaxExportedFunctions:      opts.MaxExportedFunctions,
			AllowDeviceCapabilities:   prof.Capabilities.AllowDevice,
			AllowWildcardCapabilities: prof.Capabilities.AllowWildcards,
		},
		report: &Report{
			SkillID:           m.SkillID,
			Version:           m.Version,
			Publisher:         m.Publisher,
			Accepted:          true,
			TrustDecision:     in.TrustDecision,
			PayloadSHA256:     insp.PayloadSHA256,
			ManifestWarnings:  append([]manifest.Warning{}, warnings...),
			Checks:            []Check{},
			QuarantineReasons: []string{},
		},
	}
	a.report.Policy = a.policy

	a.artifactChecks(warnings)
	a.capabilityChecks()
	a.policyChecks()

	modules := modulePaths(insp.Entries)
	a.modulePresence(modules)
	parsed := make(map[string]*moduleInfo, len(modules))
	for _, p := range modules {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
		parsed[p] = a.analyseModule(p, insp.Entries[p])
	}
	a.entrypointCheck(modules, parsed)
	a.provenanceChecks(modules, insp.Entries)
	a.sbomChecks(modules, insp.Entries)

	vuln := denyFeedCheck(in, insp, modules)
	a.add(vuln)
	a.report.VulnerabilityScan = cloneCheck(vuln)

	a.report.Passed = len(a.report.QuarantineReasons) == 0
	a.report.ShouldQuarantine = !a.report.Passed
	a.report.GeneratedAtUnixMS = opts.Now().UnixMilli()
	return a.report, nil
}

// auditor accumulates the checks of one Audit call.
type auditor struct {
	m        *manifest.Manifest
	decision *policy.Decision
	// profileMaxMemory is the profile's quotas.max_memory_bytes.
	profileMaxMemory uint64
	moduleLimits     ModuleLimits
	policy           Policy
	report           *Report
}

// add appends c, and its message to the quarantine reasons when it failed.
func (a *auditor) add(c Check) {
	a.report.Checks = append(a.report.Checks, c)
	if c.Status == StatusFail {
		a.report.QuarantineReasons = append(a.report.QuarantineReasons, c.Message)
	}
}

func pass(id, msg string, details map[string]any) Check {
	return Check{CheckID: id, Status: StatusPass, Severity: SeverityInfo, Message: msg, Details: details}
}

func warn(id, msg string, details map[string]any) Check {
	return Check{CheckID: id, Status: StatusWarn, Severity: SeverityWarning, Message: msg, Details: details}
}

func fail(id, msg string, details map[string]any) Check {
	return Check{CheckID: id, Status: StatusFail, Severity: SeverityError, Message: msg, Details: details}
}

func skipped(id, msg string, details map[string]any) Check {
	return Check{CheckID: id, Status: StatusSkipped, Severity: SeverityInfo, Message: msg, Details: details}
}

// cloneCheck copies c so that the report's two copies of a check share no
// map.
func cloneCheck(c Check) Check {
	if c.Details != nil {
		d := make(map[string]any, len(c.Details))
		for k, v := range c.Details {
			d[k] = v
		}
		c.Details = d
	}
	return c
}

// modulePaths returns the entries Palyra treats as modules (under modules/
// and ending in .wasm), sorted byte-wise, as Palyra's BTreeMap orders them.
func modulePaths(entries map[string][]byte) []string {
	var out []string
	for p := range entries {
		if strings.HasPrefix(p, "modules/") && strings.HasSuffix(p, ".wasm") {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// denyFeedCheck is the vulnerability_feed_hook check (with its copy in
// Report.VulnerabilityScan, Palyra's shape): the artifact against the
// installed deny feed. It fails when an entry matches the artifact's
// SHA-256, its signing key or a module's SHA-256 (each match's reason and
// reference in the message), and when the installed feed cannot be used;
// it passes when the feed names nothing here, and is skipped when no feed
// is installed.
func denyFeedCheck(in Input, insp *artifact.Inspection, modules []string) Check {
	const id = "vulnerability_feed_hook"
	if in.DenyFeedError != nil {
		return fail(id, "the installed deny feed cannot be used, so what it denies is unknown: "+in.DenyFeedError.Error()+
			" (install a feed the trust store trusts with palyra feed update FILE)",
			map[string]any{"feed_consulted": false})
	}
	f := in.DenyFeed
	if f == nil {
		return skipped(id, "no deny feed is installed (palyra feed update FILE installs one): nothing was checked against known-bad modules or keys",
			map[string]any{"feed_consulted": false})
	}
	sub := feed.Subject{
		ArtifactSHA256: in.ArtifactSHA256,
		PublisherKey:   hex.EncodeToString(insp.PublicKey),
		Modules:        make(map[string]string, len(modules)),
	}
	for _, p := range modules {
		sum := sha256.Sum256(insp.Entries[p])
		sub.Modules[p] = hex.EncodeToString(sum[:])
	}
	details := map[string]any{
		"feed_consulted": true,
		"feed_issuer":    f.Feed.Issuer,
		"feed_serial":    f.Feed.Serial,
		"feed_entries":   len(f.Feed.Entries),
	}
	matches := f.Match(sub, modules)
	if len(matches) == 0 {
		return pass(id, fmt.Sprintf("no entry of the deny feed of %s (serial %d, %d entries) matches this artifact, its signing key or its modules",
			f.Feed.Issuer, f.Feed.Serial, len(f.Feed.Entries)), details)
	}
	msgs := make([]string, 0, len(matches))
	denied := make([]map[string]any, 0, len(matches))
	for _, m := range matches {
		msgs = append(msgs, m.Describe(f))
		d := map[string]any{"kind": m.Kind, "value": m.Value, "target": m.Target, "reason": m.Reason}
		if m.Reference != "" {
			d["reference"] = m.Reference
		}
		denied = append(denied, d)
	}
	details["matches"] = denied
	return fail(id, listed(msgs), details)
}
