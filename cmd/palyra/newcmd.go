package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/palyra/internal/scaffold"
)

func (a *app) skillsNewCommand() *cobra.Command {
	var opts scaffold.Options
	c := &cobra.Command{
		Use:   "new SKILL_ID [--lang go|wat] [--dir D] [--sdk PATH] [--go-module M]",
		Short: "Write a new skill project: manifest, module source, test, Makefile",
		Long: "new writes a ready skill project into --dir (default: the skill id's last segment; created, and refused when not empty): " +
			"a skill.toml with every field commented and one tool, SKILL_ID.count, that counts the words of a text; " +
			"a README; a Makefile (test, build, package, install, run; package build --dir generates the SBOM and the provenance).\n\n" +
			"--lang go (the default) adds main.go on the Go SDK, main_test.go (plain `go test`, with package skilltest) and a go.mod whose replace line " +
			"points at a checkout of " + scaffold.SDKModule + " (the SDK is not published yet): --sdk PATH, else the source tree this palyra was built from, " +
			"else a checkout holding the working directory or the palyra binary.\n" +
			"--lang wat adds module.wat, a module written by hand on sdk/ABI.md, built with WABT's wat2wasm.\n\n" +
			"The skill id follows the manifest's rule (dot-separated segments of a-z, 0-9, '_' and '-') and needs two segments at least: the first is the publisher.",
		Example: "  palyra skills new acme.wordcount\n" +
			"  palyra skills new acme.wordcount --lang wat --dir ./wordcount-wat\n" +
			"  palyra skills new acme.wordcount --sdk ~/src/palyra --go-module example.com/acme/wordcount",
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SkillID = args[0]
			if opts.SDKDir == "" && (opts.Lang == "" || opts.Lang == scaffold.LangGo || opts.Lang == scaffold.LangWAT) {
				var from []string
				if wd, err := os.Getwd(); err == nil {
					from = append(from, wd)
				}
				if exe, err := os.Executable(); err == nil {
					from = append(from, filepath.Dir(exe))
				}
				opts.SDKDir = scaffold.FindSourceTree(from...)
				if opts.SDKDir == "" && opts.Lang != scaffold.LangWAT {
					return fmt.Errorf("%w: no checkout of %s found above this palyra's sources, the working directory or the binary; give one with --sdk PATH",
						scaffold.ErrSDKNotFound, scaffold.SDKModule)
				}
			}
			res, err := scaffold.Write(opts)
			if err != nil {
				return err
			}
			var b strings.Builder
			fmt.Fprintf(&b, "skills.new skill_id=%s tool_id=%s lang=%s dir=%s\n", res.SkillID, res.ToolID, res.Lang, res.Dir)
			for _, f := range res.Files {
				fmt.Fprintf(&b, "  %s\n", f)
			}
			if res.SDKDir != "" && res.Lang == scaffold.LangGo {
				fmt.Fprintf(&b, "go.mod: replace %s => %s\n", scaffold.SDKModule, res.SDKDir)
			}
			fmt.Fprintf(&b, "next: cd %s && ", res.Dir)
			if res.Lang == scaffold.LangGo {
				b.WriteString("go test ./... && ")
			}
			fmt.Fprintf(&b, "%s  (or: make build; see README.md)", res.BuildCommand)
			return a.emit(res, b.String())
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Lang, "lang", scaffold.LangGo, "language of the module: "+strings.Join(scaffold.Langs(), " or "))
	f.StringVar(&opts.Dir, "dir", "", "project directory (default: the skill id's last segment; must be empty or missing)")
	f.StringVar(&opts.SDKDir, "sdk", "", "checkout of "+scaffold.SDKModule+" for go.mod's replace line (default: found from this palyra's source tree)")
	f.StringVar(&opts.GoModule, "go-module", "", "Go module path of the project (default: the skill id)")
	return c
}
