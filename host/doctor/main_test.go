package doctor_test

import (
	"os"
	"testing"

	"github.com/palyra-go/palyra/internal/testbin"
)

// bin holds palyra-sidecar, built once by TestMain.
var bin string

func TestMain(m *testing.M) { os.Exit(testbin.Main(m, &bin, "palyra-sidecar")) }
