package abi_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/palyra-go/palyra/sdk/abi"
)

// TestCodesMatchABIDocument keeps the constants in step with the table of
// sdk/ABI.md §7.
func TestCodesMatchABIDocument(t *testing.T) {
	doc, err := os.ReadFile("../ABI.md")
	if err != nil {
		t.Fatal(err)
	}
	for c := abi.CodeInternal; c <= abi.CodeNotGranted; c++ {
		row := "| `" + strconv.Itoa(int(c)) + "` | `" + c.String() + "` |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("sdk/ABI.md lacks the row %q", row)
		}
		if got, ok := abi.CodeByName(c.String()); !ok || got != c {
			t.Errorf("CodeByName(%q) = %v, %v", c.String(), got, ok)
		}
	}
	if got := abi.Code(-42).String(); got != "-42" {
		t.Errorf("unknown code String() = %q", got)
	}
	for _, name := range []string{abi.Version, abi.ModuleCapabilities, abi.ModuleHost, abi.ModuleWASI} {
		if !strings.Contains(string(doc), name) {
			t.Errorf("sdk/ABI.md does not mention %q", name)
		}
	}
}
