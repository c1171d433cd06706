package source

import (
	"context"
	"errors"

	"github.com/palyra-go/palyra/host/install"
)

// fetchIndex gets ref.SkillID (at ref.Version, else the highest version)
// from the signed index at ref.RegistryURL or ref.RegistryDir.
func (f *Fetcher) fetchIndex(ctx context.Context, ref Ref, allowTOFU bool) (*Fetched, error) {
	return nil, errors.New("source: registry index: not implemented yet")
}

// latestIndex returns the highest version of skillID in the index a
// recorded source names.
func (f *Fetcher) latestIndex(ctx context.Context, src install.Source, skillID string, allowTOFU bool) (string, Ref, error) {
	return "", Ref{}, errors.New("source: registry index: not implemented yet")
}

// versionsIndex returns the versions of ref.SkillID in the index, ascending.
func (f *Fetcher) versionsIndex(ctx context.Context, ref Ref, allowTOFU bool) ([]string, error) {
	return nil, errors.New("source: not implemented yet")
}
