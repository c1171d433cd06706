package source

import (
	"context"
	"errors"

	"github.com/palyra-go/palyra/host/install"
)

// fetchOCI pulls the artifact ref.OCI names.
func (f *Fetcher) fetchOCI(ctx context.Context, ref Ref) (*Fetched, error) {
	return nil, errors.New("source: oci: not implemented yet")
}

// latestOCI returns the highest semver tag of the repository a recorded
// OCI source names.
func (f *Fetcher) latestOCI(ctx context.Context, src install.Source, skillID string) (string, Ref, error) {
	return "", Ref{}, errors.New("source: oci: not implemented yet")
}

// versionsOCI returns the semver tags of the repository ref.OCI names, ascending.
func (f *Fetcher) versionsOCI(ctx context.Context, ref Ref) ([]string, error) {
	return nil, errors.New("source: not implemented yet")
}
