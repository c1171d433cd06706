package host

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/hooks"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/storage"
)

// ErrPurgeNeedsAllVersions is a storage purge asked for with the removal of
// one version while others stay installed: a skill's storage is shared by
// all its versions.
var ErrPurgeNeedsAllVersions = errcode.New("purge_needs_all_versions", "storage can be purged only when no version of the skill is left")

// ErrSkillReferencedByHook is a remove that would leave no version of a
// skill that an enabled hook binding runs; the message names the bindings.
// RemoveRequest.Force disables them in the same change.
var ErrSkillReferencedByHook = errcode.New("skill_referenced_by_hook", "skill is referenced by an enabled hook binding")

// RemoveResult is what a remove took out: the versions and, with a purge,
// the skill's storage.
type RemoveResult struct {
	*install.RemoveResult
	StoragePurged bool           `json:"storage_purged"`
	PurgedUsage   *storage.Usage `json:"purged_usage,omitempty"`
	// DisabledHooks are the enabled hook bindings of the skill that a
	// forced remove disabled (as stored after the change).
	DisabledHooks []HookBinding `json:"disabled_hooks,omitempty"`
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

// purgeSkillData is the purge of a removal with purge_storage once no
// version is left: the skill's storage, then its config values (inventory
// rows and vault entries). It reports the storage's usage.
func (h *Host) purgeSkillData(ctx context.Context, id string) (storage.Usage, error) {
	u, err := h.storage.Purge(ctx, id)
	if err != nil {
		return u, err
	}
	if err := h.purgeConfig(ctx, id); err != nil {
		return u, fmt.Errorf("purging its config: %w", err)
	}
	return u, nil
}

// remove removes version of skill id ("" = every version) and, with
// purgeStorage, the skill's storage (see removeSkill), keeping the hook
// bindings referentially sound.
//
// A remove that leaves no version of the skill (every version, or its last
// one) while an enabled hook binding runs the skill is refused with
// ErrSkillReferencedByHook naming the bindings, unless force: the bindings
// are then disabled in the same change. Disabled bindings do not block.
//
// The whole check-disable-remove runs under the bindings file's exclusive
// lock, so no binding can be made or enabled in between (a BindHook or
// SetHookEnabled waits), and two removes are serialized (the second sees
// what the first left). The order is: disable the bindings (written
// atomically), then remove from the inventory; if disabling fails nothing is
// removed, and if the removal fails the bindings are written back as they
// were. A crash between the two leaves the bindings disabled and the skill
// installed: a safe state (no enabled binding names a missing skill, the
// opposite order's failure), which the operator completes by running the
// remove again or undoes with palyra hooks enable. Should writing the
// bindings back fail after a failed removal, the error says so and the
// bindings stay disabled, on the same safe side.
func (h *Host) remove(ctx context.Context, id, version, principal string, purgeStorage, force bool) (*RemoveResult, error) {
	var out *RemoveResult
	err := h.hooks.Locked(ctx, func(f *hooks.File, save func(*hooks.File) error) error {
		refs := f.EnabledFor(id)
		if len(refs) > 0 {
			last, err := leavesNoVersion(ctx, h.in, id, version)
			if err != nil {
				return err
			}
			if !last {
				refs = nil
			}
		}
		if len(refs) == 0 {
			rr, err := removeSkill(ctx, h.in, id, version, principal, purgeStorage, h.purgeSkillData)
			out = rr
			return err
		}
		if !force {
			return fmt.Errorf("%w: remove %s: %s; disable or remove them first, or remove with force (--force, \"force\": true) to disable them in the same change",
				ErrSkillReferencedByHook, describeRemoval(id, version), describeBindings(refs))
		}
		before := f.Clone()
		ids := make([]string, len(refs))
		for i, b := range refs {
			ids[i] = b.HookID
		}
		h.hooks.DisableIn(f, ids, principal)
		if err := save(f); err != nil {
			return fmt.Errorf("remove %s: disabling its hook bindings failed, nothing was removed: %w", describeRemoval(id, version), err)
		}
		rr, err := removeSkill(ctx, h.in, id, version, principal, purgeStorage, h.purgeSkillData)
		if rr == nil && err != nil {
			if rerr := save(before); rerr != nil {
				h.log.Error("hook bindings stay disabled after a failed remove", "skill_id", id, "hook_ids", ids, "error", rerr)
				return fmt.Errorf("%w (and restoring the hook bindings %s failed, they stay disabled: %v)", err, strings.Join(ids, ", "), rerr)
			}
			return err
		}
		for _, hid := range ids {
			if i := slices.IndexFunc(f.Entries, func(b hooks.Binding) bool { return b.HookID == hid }); i >= 0 {
				rr.DisabledHooks = append(rr.DisabledHooks, f.Entries[i])
			}
		}
		h.log.Info("hook bindings disabled by a forced remove", "skill_id", id, "hook_ids", ids, "principal", principal)
		out = rr
		return err
	})
	if err != nil && out == nil {
		return nil, err
	}
	return out, err
}

// leavesNoVersion says whether removing version of skill id ("" = every
// version) leaves no version of it installed.
func leavesNoVersion(ctx context.Context, in *install.Installer, id, version string) (bool, error) {
	version = strings.TrimSpace(version)
	if version == "" {
		return true, nil
	}
	ls, err := in.List(ctx, install.ListOptions{SkillID: id})
	if err != nil {
		return false, err
	}
	for _, l := range ls {
		if l.Version != version {
			return false, nil
		}
	}
	return true, nil
}

// describeRemoval names what a remove takes out, for messages.
func describeRemoval(id, version string) string {
	if strings.TrimSpace(version) == "" {
		return id + " (every version)"
	}
	return id + " " + version + " (its last version)"
}

// describeBindings names bindings for messages: "hook h1 (skill:installed),
// hook h2 (skill:removed)".
func describeBindings(bs []HookBinding) string {
	parts := make([]string, len(bs))
	for i, b := range bs {
		parts[i] = fmt.Sprintf("hook %s (%s)", b.HookID, b.Event)
	}
	n := "binding"
	if len(bs) > 1 {
		n = "bindings"
	}
	return fmt.Sprintf("enabled hook %s %s", n, strings.Join(parts, ", "))
}
