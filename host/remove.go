package host

import (
	"context"
	"fmt"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/storage"
)

// ErrPurgeNeedsAllVersions is a storage purge asked for with the removal of
// one version while others stay installed: a skill's storage is shared by
// all its versions.
var ErrPurgeNeedsAllVersions = errcode.New("purge_needs_all_versions", "storage can be purged only when no version of the skill is left")

// RemoveResult is what a remove took out: the versions and, with a purge,
// the skill's storage.
type RemoveResult struct {
	*install.RemoveResult
	StoragePurged bool           `json:"storage_purged"`
	PurgedUsage   *storage.Usage `json:"purged_usage,omitempty"`
}

// purgeFunc deletes every key of a skill's storage and reports what it held.
type purgeFunc func(ctx context.Context, skillID string) (storage.Usage, error)

// removeSkill removes version of skill id ("" = every version) through in
// and, with purgeStorage, deletes the skill's storage with purge once no
// version is left. A purge that would leave another version installed is
// refused with ErrPurgeNeedsAllVersions before anything is removed. The
// daemon and the CLI's local mode both remove this way (Host.Remove).
func removeSkill(ctx context.Context, in *install.Installer, id, version, principal string, purgeStorage bool, purge purgeFunc) (*RemoveResult, error) {
	if purgeStorage && version != "" {
		ls, err := in.List(ctx, install.ListOptions{SkillID: id})
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			if l.Version != version {
				return nil, fmt.Errorf("%w: %s %s is still installed", ErrPurgeNeedsAllVersions, l.SkillID, l.Version)
			}
		}
	}
	rr, err := in.Remove(ctx, id, version, principal)
	if err != nil {
		return nil, err
	}
	out := &RemoveResult{RemoveResult: rr}
	if !purgeStorage || rr.Current != "" {
		return out, nil
	}
	u, err := purge(ctx, rr.SkillID)
	if err != nil {
		return out, fmt.Errorf("removed %s but purging its storage failed: %w", rr.SkillID, err)
	}
	out.StoragePurged, out.PurgedUsage = true, &u
	return out, nil
}

// remove removes version of skill id ("" = every version) and, with
// purgeStorage, the skill's storage (see removeSkill).
func (h *Host) remove(ctx context.Context, id, version, principal string, purgeStorage bool) (*RemoveResult, error) {
	return removeSkill(ctx, h.in, id, version, principal, purgeStorage, h.storage.Purge)
}
