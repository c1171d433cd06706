package codescan_test

import (
	"slices"
	"testing"

	"github.com/palyra-go/palyra/internal/codescan"
)

func TestCodes(t *testing.T) {
	codes, err := codescan.Codes("../../host/errcode", "../../host/inventory")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"skill_not_found"} {
		if !slices.Contains(codes, want) {
			t.Errorf("codes %v lack %s", codes, want)
		}
	}
	if _, err := codescan.Codes("testdata-none"); err == nil {
		t.Error("a directory without Go files gave no error")
	}
}
