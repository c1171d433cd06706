package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/palyra-go/palyra/host/inventory"
	"github.com/palyra-go/palyra/host/statedir"
)

// Reader looks at what is installed in a state directory without changing
// anything: it creates no file or directory (not the state directory, not
// the inventory, not a lock file), runs no recovery and no migration, and
// takes no lock. It is what the commands that only look (palyra skills
// list, skills info, skills check, policy check) open, so that looking
// leaves the state directory exactly as it was, or absent.
//
// Its results are the Installer's, for the same state: a state directory
// without an inventory is one where nothing is installed. A Reader is safe
// for concurrent use; Close it when done.
type Reader struct {
	// in is an Installer over the read-only database, nil when there is
	// no inventory. Only its reading methods are called.
	in *Installer
	// base is the same Installer with or without a database: DenyFeed
	// reads only files.
	base   *Installer
	layout statedir.Layout
	trust  string
}

// OpenReadOnly opens a Reader on cfg.StateDir. Of cfg it uses StateDir
// (required), Policy and TrustStore (which Check judges by) and Now; the
// rest configures writes. ctx governs the opening.
func OpenReadOnly(ctx context.Context, cfg Config) (*Reader, error) {
	in, err := newInstaller(cfg)
	if err != nil {
		return nil, err
	}
	r := &Reader{base: in, layout: in.layout, trust: in.trust.Path()}
	db, err := inventory.OpenReadOnly(ctx, in.layout.Inventory())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r, nil
	case err != nil:
		return nil, fmt.Errorf("install: %w", err)
	}
	in.db, in.readOnly = db, true
	r.in = in
	return r, nil
}

// Close closes the database. It is idempotent.
func (r *Reader) Close() error {
	if r.in == nil {
		return nil
	}
	return r.in.Close()
}

// StateDir returns the absolute state directory.
func (r *Reader) StateDir() string { return r.layout.Dir() }

// Layout returns the paths of the state directory.
func (r *Reader) Layout() statedir.Layout { return r.layout }

// TrustStorePath returns the trust store file Check decides with.
func (r *Reader) TrustStorePath() string { return r.trust }

// List is Installer.List.
func (r *Reader) List(ctx context.Context, opts ListOptions) ([]Listing, error) {
	if r.in == nil {
		return []Listing{}, ctx.Err()
	}
	return r.in.List(ctx, opts)
}

// Info is Installer.Info.
func (r *Reader) Info(ctx context.Context, id, version string) (*Info, error) {
	if r.in == nil {
		return nil, r.nothingInstalled(id, version)
	}
	return r.in.Info(ctx, id, version)
}

// DenyFeed is Installer.DenyFeed.
func (r *Reader) DenyFeed(ctx context.Context) (*FeedInfo, error) { return r.base.DenyFeed(ctx) }

// Check is Installer.Check: it re-verifies, audits and judges installed
// versions against the trust store and the profile as they are now.
func (r *Reader) Check(ctx context.Context, id, version string) ([]CheckResult, error) {
	if r.in == nil {
		if id == "" {
			return nil, fmt.Errorf("install: no skill is installed: %w", ErrNotFound)
		}
		return nil, r.nothingInstalled(id, version)
	}
	return r.in.Check(ctx, id, version)
}

// Entries returns the inventory entries that match f (with their recorded
// manifests), as inventory.DB.Skills does; none without an inventory.
func (r *Reader) Entries(ctx context.Context, f inventory.Filter) ([]inventory.Entry, error) {
	if r.in == nil {
		return nil, ctx.Err()
	}
	if err := r.in.check(ctx); err != nil {
		return nil, err
	}
	es, err := r.in.db.Skills(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	return es, nil
}

// nothingInstalled is the error of a lookup in a state directory without
// an inventory: an invalid key is still reported as such.
func (r *Reader) nothingInstalled(id, version string) error {
	id, version, err := normalizeKey(id, version)
	if err != nil {
		return err
	}
	if version == "" {
		version = "current"
	}
	return fmt.Errorf("install: %w: %s %s (nothing is installed in %s)", ErrNotFound, id, version, r.layout.Dir())
}
