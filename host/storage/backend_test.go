package storage_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/palyra-go/palyra/host/storage"
	"github.com/palyra-go/palyra/host/storage/storagetest"
)

// TestStoreBackend runs the shared Backend behaviour table on the SQLite
// store (host/cluster runs it on the JetStream key-value backend).
func TestStoreBackend(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Backend {
		s, err := storage.Open(context.Background(), filepath.Join(t.TempDir(), "storage.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
