package servicetest

import (
	"context"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/errcode"
)

// skillD is the skill of the dry-run and escalation cases.
const skillD = "conf.epsilon"

// registryCases are the cases of the registry verbs (issue 21): dry runs,
// capability escalations, installs from a source, Outdated and Update.
// They run after the key rotation: the suite's publisher signs with
// rotatedKey.
func registryCases() []Case {
	return []Case{
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
	}
}
