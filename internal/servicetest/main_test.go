package servicetest_test

import (
	"os"
	"testing"

	"github.com/palyra-go/palyra/internal/testbin"
)

// bin holds palyra-sidecar and palyra-host, built once for the package.
var bin string

func TestMain(m *testing.M) { os.Exit(testbin.Main(m, &bin, "palyra-sidecar", "palyra-host")) }
