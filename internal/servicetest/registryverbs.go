package servicetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/palyra-go/palyra/internal/testregistry"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/registry"
)

const (
	skillD = "conf.epsilon" // the dry-run and escalation cases
	skillV = "conf.zeta"    // installed from a local registry, updated
)

// localRegistry is a registry directory the cases publish to: an index
// signed by the suite's publisher over the artifacts written into it.
// Both implementations under test read it (they run on this machine).
type localRegistry struct{ dir string }

// publish writes an artifact of skillV at version into the registry
// (module, wall-clock timeout) and signs the index again.
func (r *localRegistry) publish(t *testing.T, version, module string, wallMS int) error {
	t.Helper()
	if r.dir == "" {
		return errors.New("the registry directory was not created")
	}
	testregistry.Publish(t, r.dir, fmt.Sprintf("%s-%s%s", skillV, version, registry.ArtifactExt), artifactWall(t, skillV, version, Publisher, rotatedKey, module, wallMS), rotatedKey, Publisher)
	return nil
}

// ref is the source of skillV at version ("" = the newest).
func (r *localRegistry) ref(version string) *host.SourceRef {
	return &host.SourceRef{RegistryDir: r.dir, SkillID: skillV, Version: version}
}

// current returns the current version of skillV.
func current(ctx context.Context, t *testing.T, s host.Service) string {
	t.Helper()
	i, err := s.Info(ctx, host.SkillRef{SkillID: skillV})
	if err != nil {
		t.Fatalf("info %s: %v", skillV, err)
	}
	return i.Inventory.Version
}

// registryCases are the cases of the registry verbs (issue 21): dry runs,
// capability escalations, installs from a source, Outdated and Update.
// They run after the key rotation: the suite's publisher signs with
// rotatedKey.
func registryCases() []Case {
	reg := &localRegistry{}
	return append([]Case{
		{Name: "install_dry_run_writes_nothing", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: artifact(t, skillD, "1.0.0", Publisher, rotatedKey), DryRun: true})
			if err != nil {
				return err
			}
			if res.Installed || res.SkillID != skillD || res.Version != "1.0.0" {
				t.Fatalf("dry run: %+v", res)
			}
			_, err = s.Info(ctx, host.SkillRef{SkillID: skillD})
			if code := errcode.Of(err); code != "skill_not_found" {
				t.Fatalf("info after a dry run: %v (code %q), want skill_not_found", err, code)
			}
			return nil
		}},
		{Name: "install_after_dry_run", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: artifact(t, skillD, "1.0.0", Publisher, rotatedKey)})
			if err != nil {
				return err
			}
			if !res.Installed || !res.Current {
				t.Fatalf("install: %+v", res)
			}
			return nil
		}},
		{Name: "install_dry_run_escalation_refused", Code: "capability_escalation", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: artifactWall(t, skillD, "1.1.0", Publisher, rotatedKey, "echo", 20000), DryRun: true})
			if res == nil || res.Installed || res.PreviousVersion != "1.0.0" || len(res.CapabilityDiff) == 0 {
				t.Fatalf("refused dry run: %+v (the result carries the diff)", res)
			}
			return err
		}},
		{Name: "install_dry_run_escalation_accepted", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: artifactWall(t, skillD, "1.1.0", Publisher, rotatedKey, "echo", 20000), DryRun: true, AcceptCapabilities: true})
			if err != nil {
				return err
			}
			if res.Installed || len(res.CapabilityDiff) == 0 {
				t.Fatalf("accepted dry run: %+v", res)
			}
			i, err := s.Info(ctx, host.SkillRef{SkillID: skillD})
			if err != nil {
				return err
			}
			if i.Inventory.Version != "1.0.0" {
				t.Fatalf("after a dry run the current version is %s, want 1.0.0", i.Inventory.Version)
			}
			return nil
		}},
		{Name: "install_escalation_refused", Code: "capability_escalation", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: artifactWall(t, skillD, "1.1.0", Publisher, rotatedKey, "echo", 20000)})
			if res == nil || res.Installed || len(res.CapabilityDiff) == 0 {
				t.Fatalf("refused install: %+v", res)
			}
			return err
		}},
		{Name: "install_escalation_accepted", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{Artifact: artifactWall(t, skillD, "1.1.0", Publisher, rotatedKey, "echo", 20000), AcceptCapabilities: true})
			if err != nil {
				return err
			}
			if !res.Installed || !res.Current || res.PreviousVersion != "1.0.0" || len(res.CapabilityDiff) == 0 {
				t.Fatalf("accepted install: %+v", res)
			}
			return nil
		}},
		{Name: "outdated_leaves_out_file_installs", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			rep, err := s.Outdated(ctx, host.OutdatedRequest{})
			if err != nil {
				return err
			}
			if rep.Skills == nil || len(rep.Skills) != 0 {
				t.Fatalf("outdated: %+v, want no skills (every skill came from a file)", rep.Skills)
			}
			return nil
		}},
		{Name: "outdated_skill_from_a_file", Code: "no_source", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Outdated(ctx, host.OutdatedRequest{SkillID: skillD})
			return err
		}},
		{Name: "outdated_unknown_skill", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Outdated(ctx, host.OutdatedRequest{SkillID: "conf.nowhere"})
			return err
		}},
		{Name: "update_skill_from_a_file", Code: "no_source", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Update(ctx, host.UpdateRequest{SkillID: skillD, DryRun: true})
			return err
		}},
		{Name: "update_unknown_skill", Code: "skill_not_found", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Update(ctx, host.UpdateRequest{SkillID: "conf.nowhere"})
			return err
		}},
		{Name: "install_from_two_sources", Code: "invalid_source", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			from := host.SourceRef{RegistryURL: "https://127.0.0.1:1/index.json", RegistryDir: t.TempDir(), SkillID: skillD}
			_, err := s.Install(ctx, host.InstallRequest{From: &from, DryRun: true})
			return err
		}},
		{Name: "install_from_oci_with_a_skill_id", Code: "invalid_source", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			// An OCI reference names its version by tag or digest.
			from := host.SourceRef{OCI: "oci://127.0.0.1:1/conf/epsilon:1.0.0", SkillID: skillD}
			_, err := s.Install(ctx, host.InstallRequest{From: &from})
			return err
		}},
		{Name: "remove_dry_run_skill", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Remove(ctx, host.RemoveRequest{SkillID: skillD})
			return err
		}},
	}, reg.cases()...)
}

// cases install skillV from the registry, then publish newer versions and
// follow them with Outdated and Update. The last one removes the registry
// directory, whatever the others did.
func (r *localRegistry) cases() []Case {
	return []Case{
		{Name: "registry_publish", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			dir, err := os.MkdirTemp("", "servicetest-registry-")
			if err != nil {
				return err
			}
			r.dir = dir
			return r.publish(t, "1.0.0", "echo", 5000)
		}},
		{Name: "install_from_registry_dry_run", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{From: r.ref(""), DryRun: true})
			if err != nil {
				return err
			}
			if res.Installed || res.SkillID != skillV || res.Version != "1.0.0" {
				t.Fatalf("dry run: %+v", res)
			}
			if _, err := s.Info(ctx, host.SkillRef{SkillID: skillV}); errcode.Of(err) != "skill_not_found" {
				t.Fatalf("info after a dry run: %v", err)
			}
			return nil
		}},
		{Name: "install_from_registry_not_published", Code: "not_published", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			_, err := s.Install(ctx, host.InstallRequest{From: r.ref("9.9.9")})
			return err
		}},
		{Name: "install_from_registry", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Install(ctx, host.InstallRequest{From: r.ref("")})
			if err != nil {
				return err
			}
			if !res.Installed || !res.Current || res.Version != "1.0.0" ||
				res.Source.Kind != inventory.SourceLocalRegistry || res.Source.Ref == "" {
				t.Fatalf("install: %+v", res)
			}
			return nil
		}},
		{Name: "outdated_at_the_newest", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			rep, err := s.Outdated(ctx, host.OutdatedRequest{})
			if err != nil {
				return err
			}
			if len(rep.Skills) != 1 || rep.Skills[0].SkillID != skillV || rep.Skills[0].Outdated ||
				rep.Skills[0].CurrentVersion != "1.0.0" || rep.Skills[0].LatestVersion != "1.0.0" || rep.Skills[0].Error != "" {
				t.Fatalf("outdated: %+v", rep.Skills)
			}
			return nil
		}},
		{Name: "update_already_current", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Update(ctx, host.UpdateRequest{SkillID: skillV})
			if err != nil {
				return err
			}
			if res.Updated || res.Reason != "already_current" || res.FromVersion != "1.0.0" || res.ToVersion != "1.0.0" {
				t.Fatalf("update: %+v", res)
			}
			return nil
		}},
		{Name: "registry_publish_an_escalation", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			return r.publish(t, "1.1.0", "echo", 20000)
		}},
		{Name: "outdated_lists_the_newer_version", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			rep, err := s.Outdated(ctx, host.OutdatedRequest{SkillID: skillV})
			if err != nil {
				return err
			}
			if len(rep.Skills) != 1 || !rep.Skills[0].Outdated || rep.Skills[0].LatestVersion != "1.1.0" ||
				rep.Skills[0].Source.Kind != inventory.SourceLocalRegistry {
				t.Fatalf("outdated: %+v", rep.Skills)
			}
			return nil
		}},
		{Name: "update_dry_run_escalation_refused", Code: "capability_escalation", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Update(ctx, host.UpdateRequest{SkillID: skillV, DryRun: true})
			if res == nil || res.Updated || !res.DryRun || res.FromVersion != "1.0.0" || res.ToVersion != "1.1.0" || len(res.CapabilityDiff) == 0 {
				t.Fatalf("update dry run: %+v (the result carries the diff)", res)
			}
			return err
		}},
		{Name: "update_dry_run_shows_the_diff", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Update(ctx, host.UpdateRequest{SkillID: skillV, DryRun: true, AcceptCapabilities: true})
			if err != nil {
				return err
			}
			if res.Updated || res.ToVersion != "1.1.0" || len(res.CapabilityDiff) == 0 || res.Escalation.Empty() {
				t.Fatalf("update dry run: %+v", res)
			}
			if v := current(ctx, t, s); v != "1.0.0" {
				t.Fatalf("after a dry run %s is current, want 1.0.0", v)
			}
			return nil
		}},
		{Name: "update_escalation_refused", Code: "capability_escalation", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Update(ctx, host.UpdateRequest{SkillID: skillV})
			if res == nil || res.Updated || len(res.CapabilityDiff) == 0 {
				t.Fatalf("refused update: %+v", res)
			}
			if v := current(ctx, t, s); v != "1.0.0" {
				t.Fatalf("after a refused update %s is current, want 1.0.0", v)
			}
			return err
		}},
		{Name: "update_escalation_accepted", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Update(ctx, host.UpdateRequest{SkillID: skillV, AcceptCapabilities: true})
			if err != nil {
				return err
			}
			if !res.Updated || res.FromVersion != "1.0.0" || res.ToVersion != "1.1.0" || len(res.CapabilityDiff) == 0 ||
				res.Source.Kind != inventory.SourceLocalRegistry {
				t.Fatalf("update: %+v", res)
			}
			if v := current(ctx, t, s); v != "1.1.0" {
				t.Fatalf("after the update %s is current, want 1.1.0", v)
			}
			return nil
		}},
		{Name: "update_to_an_older_version", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Update(ctx, host.UpdateRequest{SkillID: skillV, Version: "1.0.0"})
			if err != nil {
				return err
			}
			if res.Updated || res.Reason != "already_current" || res.ToVersion != "1.1.0" {
				t.Fatalf("update to 1.0.0: %+v", res)
			}
			return nil
		}},
		{Name: "registry_publish_a_failing_version", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			return r.publish(t, "1.2.0", "wasi_path_open", 20000)
		}},
		{Name: "update_failing_audit_held_back", Code: "audit_failed", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			res, err := s.Update(ctx, host.UpdateRequest{SkillID: skillV})
			if res == nil || res.Updated || res.ToVersion != "1.2.0" || res.Install == nil ||
				res.Install.HeldBack == nil || res.Install.HeldBack.Code != "audit_failed" {
				t.Fatalf("update to a failing version: %+v", res)
			}
			if v := current(ctx, t, s); v != "1.1.0" {
				t.Fatalf("after a held-back update %s is current, want 1.1.0", v)
			}
			return err
		}},
		{Name: "registry_remove", Run: func(ctx context.Context, t *testing.T, s host.Service) error {
			if r.dir != "" {
				defer os.RemoveAll(r.dir)
			}
			_, err := s.Remove(ctx, host.RemoveRequest{SkillID: skillV})
			return err
		}},
	}
}
