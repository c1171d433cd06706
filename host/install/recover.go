package install

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/trust"
)

// RecoverReport lists what Recover found and repaired. Paths are absolute.
type RecoverReport struct {
	// RemovedStaging are staging and trash directories deleted.
	RemovedStaging []string `json:"removed_staging"`
	// RemovedOrphans are version directories the inventory has no row for
	// (an install that crashed before its commit), deleted.
	RemovedOrphans []string `json:"removed_orphans"`
	// Restored are the old copies of a forced reinstall put back in place
	// because the reinstall never committed.
	Restored []string `json:"restored"`
	// RemovedSetAside are old copies of a forced reinstall that committed,
	// deleted.
	RemovedSetAside []string `json:"removed_set_aside"`
	// Missing are installed versions whose directory or artifact file is
	// missing, which Recover cannot repair. They are left for Reaudit,
	// which quarantines them (and also checks every artifact's SHA-256,
	// which Recover does not, to stay cheap on every Open).
	Missing []string `json:"missing"`
	// Skipped are skills whose lock another live operation held; that
	// operation finishes (or a later Recover repairs) them.
	Skipped []string `json:"skipped"`
	// SavedPins are the TOFU pins of committed installs that a crash kept
	// out of the trust store, saved now ("<skill>@<version>").
	SavedPins []string `json:"saved_pins"`
	// PinConflicts are pending pins that could not be saved because the
	// trust store now holds another key for the publisher
	// ("<skill>@<version>"); the version then fails re-verification, and
	// Reaudit quarantines it.
	PinConflicts []string `json:"pin_conflicts"`
}

// Recover makes the skills directory agree with the inventory, which is
// the source of truth. For every skill directory whose lock it can take
// without waiting (a skill locked by a live operation is skipped):
//
//   - staging (and trash) directories ".tmp-install-*" are deleted;
//   - a set-aside copy ".replaced-<version>" (the old directory of a forced
//     reinstall) whose artifact is the one the inventory records was never
//     superseded: it is put back in place of whatever directory the
//     reinstall left; otherwise the reinstall committed and it is deleted;
//   - a version directory with no inventory row is deleted;
//   - a version whose directory is missing is reported in Missing.
//
// First, the TOFU pins that committed installs recorded as pending (a
// crash came between the install's transaction and the trust store's
// write) are saved in the trust store, under its lock, and their rows
// dropped: a committed install keeps its pin.
//
// A skill directory left with no version is deleted. Directories whose
// names are not skill ids or versions are left alone. Open runs Recover;
// Install runs it for the skill it installs, under that skill's lock.
func (in *Installer) Recover(ctx context.Context) (*RecoverReport, error) {
	if err := in.check(ctx); err != nil {
		return nil, err
	}
	rep := &RecoverReport{}
	if err := in.savePendingPins(ctx, rep); err != nil {
		return rep, err
	}
	ents, err := os.ReadDir(in.skillsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("install: recover: %w", err)
	}
	seen := map[string]bool{}
	for _, ent := range ents {
		if !ent.IsDir() {
			continue
		}
		id, err := normalizeID(ent.Name())
		if err != nil || id != ent.Name() {
			continue
		}
		seen[id] = true
		lk, err := lockSkill(ctx, filepath.Join(in.skillsDir, id), in.lockTimeout, true)
		if errors.Is(err, errWouldBlock) {
			rep.Skipped = append(rep.Skipped, id)
			continue
		}
		if err != nil {
			return rep, err
		}
		empty, err := in.recoverSkill(ctx, id, rep)
		if empty && err == nil {
			lk.releaseAndRemove()
		} else {
			lk.unlock()
		}
		if err != nil {
			return rep, err
		}
	}
	// Installed versions whose skill directory is gone altogether.
	all, err := in.db.Skills(ctx, inventory.Filter{})
	if err != nil {
		return rep, fmt.Errorf("install: recover: %w", err)
	}
	for _, e := range all {
		if !seen[e.SkillID] {
			rep.Missing = append(rep.Missing, in.VersionDir(e.SkillID, e.Version))
		}
	}
	return rep, nil
}

// recoverSkill repairs one skill directory; the caller holds its lock.
// It reports whether the directory holds nothing but the lock afterwards
// and the skill has no installed version.
func (in *Installer) recoverSkill(ctx context.Context, id string, rep *RecoverReport) (empty bool, err error) {
	skillDir := filepath.Join(in.skillsDir, id)
	rows, err := in.db.Skills(ctx, inventory.Filter{SkillID: id})
	if err != nil {
		return false, fmt.Errorf("install: recover %s: %w", id, err)
	}
	recorded := make(map[string]string, len(rows)) // version → artifact sha256
	for _, r := range rows {
		recorded[r.Version] = r.ArtifactSHA256
	}
	ents, err := os.ReadDir(skillDir)
	if errors.Is(err, os.ErrNotExist) {
		ents = nil
	} else if err != nil {
		return false, fmt.Errorf("install: recover %s: %w", id, err)
	}
	changed := false
	// Garbage and set-aside copies first, so that a restored copy is seen
	// as the version directory below.
	for _, ent := range ents {
		name := ent.Name()
		p := filepath.Join(skillDir, name)
		switch {
		case strings.HasPrefix(name, ".tmp-"):
			if err := os.RemoveAll(p); err != nil {
				return false, fmt.Errorf("install: recover: %w", err)
			}
			rep.RemovedStaging = append(rep.RemovedStaging, p)
			changed = true
		case strings.HasPrefix(name, setAsidePrefix):
			v := strings.TrimPrefix(name, setAsidePrefix)
			want, ok := recorded[v]
			got, herr := fileSHA256(filepath.Join(p, ArtifactFile))
			if !ok || herr != nil || got != want {
				// The reinstall committed (or the version was removed).
				removeDir(skillDir, p)
				rep.RemovedSetAside = append(rep.RemovedSetAside, p)
				changed = true
				continue
			}
			// The inventory still records the old copy.
			vd := filepath.Join(skillDir, v)
			if cur, err := fileSHA256(filepath.Join(vd, ArtifactFile)); err == nil && cur == want {
				removeDir(skillDir, p) // identical bytes: either copy will do
				rep.RemovedSetAside = append(rep.RemovedSetAside, p)
				changed = true
				continue
			}
			if _, err := os.Lstat(vd); err == nil {
				removeDir(skillDir, vd)
			}
			if err := os.Rename(p, vd); err != nil {
				return false, fmt.Errorf("install: recover: restore %s: %w", vd, err)
			}
			rep.Restored = append(rep.Restored, vd)
			changed = true
		}
	}
	if changed {
		if err := syncDir(skillDir); err != nil {
			return false, err
		}
		if ents, err = os.ReadDir(skillDir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("install: recover %s: %w", id, err)
		}
	}
	present := map[string]bool{}
	others := 0
	for _, ent := range ents {
		name := ent.Name()
		if name == lockName {
			continue
		}
		v, verr := normalizeVersion(name)
		if !ent.IsDir() || verr != nil || v != name {
			others++ // not ours: leave it
			continue
		}
		if _, ok := recorded[v]; !ok {
			removeDir(skillDir, filepath.Join(skillDir, name))
			rep.RemovedOrphans = append(rep.RemovedOrphans, filepath.Join(skillDir, name))
			continue
		}
		present[v] = true
	}
	for _, r := range rows {
		vd := filepath.Join(skillDir, r.Version)
		if !present[r.Version] {
			rep.Missing = append(rep.Missing, vd)
			continue
		}
		if _, err := os.Stat(filepath.Join(vd, ArtifactFile)); err != nil {
			rep.Missing = append(rep.Missing, vd)
		}
	}
	return len(rows) == 0 && len(present) == 0 && others == 0, nil
}

// savePendingPins saves the pending TOFU pins of committed installs in the
// trust store and drops their rows. A pin whose publisher has another key
// in the store now is dropped and reported in PinConflicts.
func (in *Installer) savePendingPins(ctx context.Context, rep *RecoverReport) error {
	pins, err := in.db.PendingPins(ctx)
	if err != nil {
		return fmt.Errorf("install: recover: %w", err)
	}
	for _, p := range pins {
		name := p.SkillID + "@" + p.Version
		key, err := hex.DecodeString(p.PublicKeyHex)
		if err != nil {
			return fmt.Errorf("install: recover: pending pin of %s: %w", name, err)
		}
		saved := false
		err = in.trust.Update(ctx, func(s *trust.Store) (bool, error) {
			d, err := s.Decide(p.Publisher, ed25519.PublicKey(key), true)
			if err != nil {
				return false, err
			}
			saved = d == trust.DecisionTOFUNewlyPinned
			return saved, nil
		})
		switch {
		case errors.Is(err, trust.ErrTOFUKeyMismatch), errors.Is(err, trust.ErrTrustedPublisherKeyMismatch):
			rep.PinConflicts = append(rep.PinConflicts, name)
		case err != nil:
			return fmt.Errorf("install: recover: pending pin of %s: %w", name, err)
		case saved:
			rep.SavedPins = append(rep.SavedPins, name)
		}
		err = in.db.Update(ctx, func(tx *inventory.Tx) error { return tx.DeletePendingPin(p.SkillID, p.Version) })
		if err != nil {
			return fmt.Errorf("install: recover: %w", err)
		}
	}
	return nil
}
