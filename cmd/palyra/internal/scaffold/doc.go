// Package scaffold writes a new skill project, for `palyra skills new`.
//
// The templates are embedded (templates/common for every language,
// templates/go and templates/wat for one) and rendered with text/template:
//
//	res, err := scaffold.Write(scaffold.Options{SkillID: "acme.wordcount", Lang: scaffold.LangGo, Dir: "wordcount", SDKDir: root})
//
// A project has one tool, <skill_id>.count, that counts the words of a text,
// a skill.toml with every field commented (checked with the manifest parser
// before anything is written), a README and a Makefile (`palyra skills
// package build --dir .` generates the SBOM and the provenance). A Go
// project adds main.go on the Go SDK with no wasip1 build constraint, so
// that `go test` runs main_test.go (package skilltest) natively, and a go.mod whose replace line points at a checkout of
// github.com/palyra-go/palyra, the module the SDK belongs to while it is not
// published: Options.SDKDir, or FindSourceTree's answer. A WAT project adds
// module.wat, a hand-written module on the ABI of sdk/ABI.md.
//
// Write refuses a directory that exists and is not empty (ErrDirNotEmpty), a
// skill id that breaks the manifest's rule or has no publisher segment
// (ErrInvalidSkillID), an unknown language (ErrUnknownLang), and a Go
// project with no SDK checkout (ErrSDKNotFound). It writes each file with
// O_EXCL and removes what it wrote when a later step fails.
//
// The package reads no environment variables: the command passes what the
// user gave.
package scaffold
