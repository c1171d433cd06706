//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package inventory

import (
	"context"
	"time"
)

// writerLock is a no-op on this platform: writers of several processes are
// kept apart by SQLite's own lock (BEGIN IMMEDIATE plus the busy timeout)
// only.
type writerLock struct{}

func openWriterLock(string) (*writerLock, error)              { return &writerLock{}, nil }
func (*writerLock) lock(context.Context, time.Duration) error { return nil }
func (*writerLock) unlock() error                             { return nil }
func (*writerLock) close() error                              { return nil }

// generation is unavailable here, so DB.Skill never serves from its cache.
func (*writerLock) generation() (uint64, bool) { return 0, false }
func (*writerLock) bump() error                { return nil }
