package versioncmd_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/cmd/internal/versioncmd"
	"github.com/palyra-go/palyra/internal/buildinfo"
)

func TestParseOutput(t *testing.T) {
	for _, tt := range []struct {
		json    bool
		output  string
		want    bool
		wantErr bool
	}{
		{false, "", false, false},
		{false, "text", false, false},
		{true, "text", true, false}, // --json with the default -o
		{false, "json", true, false},
		{false, "yaml", false, true},
	} {
		got, err := versioncmd.ParseOutput(tt.json, tt.output)
		if got != tt.want || (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, cliconfig.ErrUsage)) {
			t.Errorf("ParseOutput(%t, %q) = %t, %v", tt.json, tt.output, got, err)
		}
	}
}

// TestInstall: a root with Install answers --version with the one-line
// form and `version -o json` with the Info.
func TestInstall(t *testing.T) {
	run := func(args ...string) (string, error) {
		root := &cobra.Command{Use: "prog", SilenceErrors: true, SilenceUsage: true}
		versioncmd.Install(root, "prog")
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		err := root.Execute()
		return out.String(), err
	}
	out, err := run("--version")
	if want := buildinfo.Get("prog").String() + "\n"; err != nil || out != want {
		t.Fatalf("--version = %q, %v; want %q", out, err, want)
	}
	out, err = run("version", "-o", "json")
	var in buildinfo.Info
	if err != nil || json.Unmarshal([]byte(out), &in) != nil || in.Program != "prog" {
		t.Fatalf("version -o json = %q, %v", out, err)
	}
	out, err = run("version")
	if err != nil || !strings.HasPrefix(out, "prog ") || !strings.Contains(out, "sidecar protocol:") {
		t.Fatalf("version = %q, %v", out, err)
	}
	if _, err := run("version", "-o", "yaml"); !errors.Is(err, cliconfig.ErrUsage) {
		t.Fatalf("version -o yaml: %v", err)
	}
}
