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
	for _, want := range []string{"skill_not_found", "timeout", "unknown_tool"} {
		if !slices.Contains(codes, want) {
			t.Errorf("codes %v lack %s", codes, want)
		}
	}
	if _, err := codescan.Codes("testdata-none"); err == nil {
		t.Error("a directory without Go files gave no error")
	}
}

// TestSentinels reads real packages: sentinels declared with errcode.New
// (or New inside host/errcode), and re-exports followed to them, across
// packages and through chains (host.ErrUnknownTool = manifest.ErrUnknownTool
// = errcode.ErrUnknownTool), in a cgo package too.
func TestSentinels(t *testing.T) {
	tests := []struct {
		dir, name, code string
		alias           bool
	}{
		{"../../host/errcode", "ErrTimeout", "timeout", false},
		{"../../host/inventory", "ErrNotFound", "skill_not_found", false},
		{"../../host", "ErrSkillNotFound", "skill_not_found", true},
		{"../../host", "ErrDisabled", "skill_disabled", false},
		{"../../host", "ErrUnknownTool", "unknown_tool", true},
		{"../../host/install", "ErrNotFound", "skill_not_found", true},
		{"../../sidecar/internal/wasmrt", "ErrTimeout", "timeout", true},
		{"../../sidecar/internal/wasmrt", "ErrFuelExhausted", "fuel_exhausted", false},
	}
	for _, tt := range tests {
		t.Run(tt.dir+"."+tt.name, func(t *testing.T) {
			ss, err := codescan.Sentinels(tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(ss, func(s codescan.Sentinel) bool { return s.Name == tt.name })
			if i < 0 {
				t.Fatalf("%s not found in %+v", tt.name, ss)
			}
			if s := ss[i]; s.Code != tt.code || s.Alias != tt.alias || s.Message == "" || s.Pos == "" {
				t.Errorf("got %+v, want code %s alias %v", s, tt.code, tt.alias)
			}
		})
	}
}

// TestSentinelsWithTests reads the sentinels of the test files only when
// asked to.
func TestSentinelsWithTests(t *testing.T) {
	has := func(ss []codescan.Sentinel, code string) bool {
		return slices.ContainsFunc(ss, func(s codescan.Sentinel) bool { return s.Code == code })
	}
	plain, err := codescan.Sentinels("../../host/errcode")
	if err != nil {
		t.Fatal(err)
	}
	all, err := codescan.SentinelsWithTests("../../host/errcode")
	if err != nil {
		t.Fatal(err)
	}
	if has(plain, "thing_failed") || !has(all, "thing_failed") {
		t.Errorf("the test sentinel thing_failed: without tests %v, with tests %v", has(plain, "thing_failed"), has(all, "thing_failed"))
	}
}
