package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/install"
	"github.com/palyra-go/palyra/host/storage"
)

// lifecycle is what the skills verbs act on: the state directory through
// an installer (local mode) or a running daemon (--url). Both give the same
// results, so every verb formats them one way.
type lifecycle interface {
	List(ctx context.Context, o install.ListOptions) (skillsRoot string, entries []install.Listing, err error)
	Info(ctx context.Context, id, version string) (*install.Info, error)
	Verify(ctx context.Context, id, version string) (*install.VerifyResult, error)
	Audit(ctx context.Context, id, version string) (*install.AuditResult, error)
	Quarantine(ctx context.Context, id, version, reason string) (*install.StatusResult, error)
	Disable(ctx context.Context, id, version, reason string) (*install.StatusResult, error)
	Enable(ctx context.Context, id, version, reason string, override bool) (*install.StatusResult, error)
	// Remove also reports the skills root locally ("" through a daemon).
	Remove(ctx context.Context, id, version string, purge bool) (*host.RemoveResult, string, error)
	// Reaudit returns the report with the error when some version could
	// not be re-audited.
	Reaudit(ctx context.Context) (*install.ReauditReport, error)
	Close() error
}

// lifecycleReader is what the verbs that only look (list, info) act on:
// a running daemon, or the state directory opened read-only, so that
// looking leaves it exactly as it was (or absent).
type lifecycleReader interface {
	List(ctx context.Context, o install.ListOptions) (skillsRoot string, entries []install.Listing, err error)
	Info(ctx context.Context, id, version string) (*install.Info, error)
	Close() error
}

// lifecycleReader returns the daemon's lifecycle in daemon mode
// (localFlags as in daemonClient), else a reader of the state directory.
// Close it after use.
func (a *app) lifecycleReader(cmd *cobra.Command, sf *stateFlags, localFlags ...string) (lifecycleReader, error) {
	cl, err := a.daemonClient(cmd, localFlags...)
	if err != nil {
		return nil, err
	}
	if cl != nil {
		return remoteLifecycle{cl}, nil
	}
	r, err := a.openReader(cmd, sf)
	if err != nil {
		return nil, err
	}
	return localReader{r}, nil
}

// localReader reads the state directory without changing it.
type localReader struct{ r *install.Reader }

func (l localReader) List(ctx context.Context, o install.ListOptions) (string, []install.Listing, error) {
	ls, err := l.r.List(ctx, o)
	return l.r.Layout().SkillsDir(), ls, err
}

func (l localReader) Info(ctx context.Context, id, version string) (*install.Info, error) {
	return l.r.Info(ctx, id, version)
}

func (l localReader) Close() error { return l.r.Close() }

// lifecycle returns the daemon's lifecycle in daemon mode (localFlags as in
// daemonClient), else the state directory's. Close it after use.
func (a *app) lifecycle(cmd *cobra.Command, sf *stateFlags, localFlags ...string) (lifecycle, error) {
	cl, err := a.daemonClient(cmd, localFlags...)
	if err != nil {
		return nil, err
	}
	if cl != nil {
		return remoteLifecycle{cl}, nil
	}
	in, err := a.openInstaller(cmd, sf)
	if err != nil {
		return nil, err
	}
	return localLifecycle{in: in, principal: a.daemon.principal}, nil
}

// localLifecycle works on the state directory.
type localLifecycle struct {
	in        *install.Installer
	principal string
}

func (l localLifecycle) List(ctx context.Context, o install.ListOptions) (string, []install.Listing, error) {
	ls, err := l.in.List(ctx, o)
	return l.in.Layout().SkillsDir(), ls, err
}

func (l localLifecycle) Info(ctx context.Context, id, version string) (*install.Info, error) {
	return l.in.Info(ctx, id, version)
}

func (l localLifecycle) Verify(ctx context.Context, id, version string) (*install.VerifyResult, error) {
	return l.in.Verify(ctx, id, version)
}

func (l localLifecycle) Audit(ctx context.Context, id, version string) (*install.AuditResult, error) {
	return l.in.AuditInstalled(ctx, id, version)
}

func (l localLifecycle) Quarantine(ctx context.Context, id, version, reason string) (*install.StatusResult, error) {
	return l.in.Quarantine(ctx, id, version, reason, l.principal)
}

func (l localLifecycle) Disable(ctx context.Context, id, version, reason string) (*install.StatusResult, error) {
	return l.in.Disable(ctx, id, version, reason, l.principal)
}

func (l localLifecycle) Enable(ctx context.Context, id, version, reason string, override bool) (*install.StatusResult, error) {
	return l.in.Enable(ctx, id, version, install.EnableOptions{Override: override, Reason: reason, Principal: l.principal})
}

func (l localLifecycle) Remove(ctx context.Context, id, version string, purge bool) (*host.RemoveResult, string, error) {
	state := l.in.StateDir()
	r, err := host.RemoveSkill(ctx, l.in, id, version, l.principal, purge, func(ctx context.Context, skillID string) (storage.Usage, error) {
		return purgeStorage(ctx, state, skillID)
	})
	return r, l.in.Layout().SkillsDir(), err
}

func (l localLifecycle) Reaudit(ctx context.Context) (*install.ReauditReport, error) {
	return l.in.Reaudit(ctx)
}

func (l localLifecycle) Close() error { return l.in.Close() }

// purgeStorage deletes every key of skillID from the state directory's
// storage database. With no database nothing was ever stored: it reports
// an empty purge without creating one.
func purgeStorage(ctx context.Context, state, skillID string) (storage.Usage, error) {
	p := host.StoragePath(state)
	if _, err := os.Stat(p); os.IsNotExist(err) {
		return storage.Usage{}, nil
	}
	st, err := storage.Open(ctx, p)
	if err != nil {
		return storage.Usage{}, err
	}
	u, err := st.Purge(ctx, skillID)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	return u, err
}

// remoteLifecycle works through a daemon.
type remoteLifecycle struct{ c *client.Client }

func (r remoteLifecycle) List(ctx context.Context, o install.ListOptions) (string, []install.Listing, error) {
	sl, err := r.c.List(ctx, o)
	if err != nil {
		return "", nil, err
	}
	return sl.SkillsRoot, sl.Entries, nil
}

func (r remoteLifecycle) Info(ctx context.Context, id, version string) (*install.Info, error) {
	return r.c.Info(ctx, id, version)
}

func (r remoteLifecycle) Verify(ctx context.Context, id, version string) (*install.VerifyResult, error) {
	return r.c.Verify(ctx, id, version)
}

func (r remoteLifecycle) Audit(ctx context.Context, id, version string) (*install.AuditResult, error) {
	return r.c.Audit(ctx, id, version)
}

func (r remoteLifecycle) Quarantine(ctx context.Context, id, version, reason string) (*install.StatusResult, error) {
	return r.c.Quarantine(ctx, id, client.StatusRequest{Version: version, Reason: reason})
}

func (r remoteLifecycle) Disable(ctx context.Context, id, version, reason string) (*install.StatusResult, error) {
	return r.c.Disable(ctx, id, client.StatusRequest{Version: version, Reason: reason})
}

func (r remoteLifecycle) Enable(ctx context.Context, id, version, reason string, override bool) (*install.StatusResult, error) {
	return r.c.Enable(ctx, id, client.StatusRequest{Version: version, Reason: reason, Override: override})
}

func (r remoteLifecycle) Remove(ctx context.Context, id, version string, purge bool) (*host.RemoveResult, string, error) {
	res, err := r.c.Remove(ctx, id, version, purge)
	return res, "", err
}

func (r remoteLifecycle) Reaudit(ctx context.Context) (*install.ReauditReport, error) {
	return r.c.Reaudit(ctx)
}

func (r remoteLifecycle) Close() error { return nil }
