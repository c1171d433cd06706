package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/errcode"
	"github.com/palyra-go/palyra/host/supervisor"
)

// zipEntry is one entry R3 writes into a crafted archive.
type zipEntry struct {
	name   string
	data   []byte
	method uint16      // zip.Store or zip.Deflate; others are written raw
	mode   fs.FileMode // 0: a regular file
	flags  uint16      // extra general-purpose flags (1: encrypted)
}

// writeZip writes entries as a zip archive, as they are: no name is
// checked or cleaned.
func writeZip(entries []zipEntry) ([]byte, error) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, en := range entries {
		hdr := &zip.FileHeader{Name: en.name, Method: en.method}
		if en.mode != 0 {
			hdr.SetMode(en.mode)
		}
		var (
			dst io.Writer
			err error
		)
		if en.flags != 0 || (en.method != zip.Store && en.method != zip.Deflate) {
			hdr.Flags |= en.flags
			hdr.CompressedSize64 = uint64(len(en.data))
			hdr.UncompressedSize64 = uint64(len(en.data))
			dst, err = w.CreateRaw(hdr)
		} else {
			dst, err = w.CreateHeader(hdr)
		}
		if err != nil {
			return nil, err
		}
		if _, err := dst.Write(en.data); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readZip returns the entries of a valid archive.
func readZip(data []byte) ([]zipEntry, error) {
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	var out []zipEntry
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, zipEntry{name: f.Name, data: b, method: zip.Deflate})
	}
	return out, nil
}

// wasmModule is a wasm binary of the given sections (id, payload).
func wasmModule(sections ...[]byte) []byte {
	b := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	for _, s := range sections {
		b = append(b, s[0])
		b = binary.AppendUvarint(b, uint64(len(s)-1))
		b = append(b, s[1:]...)
	}
	return b
}

// section is a wasm section: id then payload.
func section(id byte, payload ...[]byte) []byte {
	s := []byte{id}
	for _, p := range payload {
		s = append(s, p...)
	}
	return s
}

// compileBomb is a module of n functions returning 0, the first exported
// as run (the 300,000: a few bytes each, cheap to verify,
// expensive to compile).
func compileBomb(n int) []byte {
	types := section(1, []byte{1, 0x60, 0, 1, 0x7f})
	funcs := binary.AppendUvarint([]byte{3}, uint64(n))
	exports := section(7, []byte{1, 3, 'r', 'u', 'n', 0, 0})
	codes := binary.AppendUvarint([]byte{10}, uint64(n))
	for range n {
		funcs = append(funcs, 0)
		codes = append(codes, 4, 0, 0x41, 0, 0x0b) // body size 4: no locals, i32.const 0, end
	}
	return wasmModule(types, funcs, exports, codes)
}

// withCustomSection is module with a custom section of n incompressible
// bytes appended.
func withCustomSection(module []byte, n int) []byte {
	payload := make([]byte, n)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range payload {
		payload[i] = byte(r.Uint32())
	}
	b := append(bytes.Clone(module), 0)
	b = binary.AppendUvarint(b, uint64(n+2))
	b = append(b, 1, 'x')
	return append(b, payload...)
}

// foreignImportModule imports env.exec, which no Palyra host provides.
var foreignImportModule = wasmModule(
	section(1, []byte{1, 0x60, 0, 0}),
	section(2, []byte{1, 3, 'e', 'n', 'v', 4, 'e', 'x', 'e', 'c', 0, 0}),
)

// hostileArtifact is one R3 case: a name and how to make its bytes.
type hostileArtifact struct {
	name string
	make func(e *env, valid []zipEntry) ([]byte, error)
}

// ignorableArtifacts are the cases that hold when refused or when admitted
// with nothing written outside the state dir: a directory entry carries no
// data, so skipping it is as good as refusing it.
var ignorableArtifacts = map[string]bool{dirEntryCase: true}

const dirEntryCase = "directory entry ../../evil-dir/ (refused or ignored)"

// signedModule signs module as skill bench.r3 (the fixture manifest), or
// as bench.r3m<hash of module> when it is not the base module, so that no
// case meets another's leftovers.
func signedModule(e *env, module []byte, key ed25519.PrivateKey) ([]byte, error) {
	id := "bench.r3"
	if !bytes.Equal(module, mustRead(e, "echo.wasm")) {
		id = fmt.Sprintf("bench.r3m%x", sha256.Sum256(module))[:17]
	}
	b, err := artifact.Build(artifact.BuildInput{
		Manifest:   []byte(fmt.Sprintf(fixtureManifest, id, "1.0.0", "")),
		Modules:    []artifact.File{{Path: "module.wasm", Data: module}},
		SBOM:       []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6"}`),
		Provenance: []byte(`{"builder":{"id":"palyra-bench"},"subject":[{"name":"modules/module.wasm"}]}`),
		SigningKey: key, SignedAt: signedAt,
	})
	if err != nil {
		return nil, err
	}
	return b.Bytes, nil
}

// with returns valid with fn applied to a copy of its entries.
func with(fn func([]zipEntry) []zipEntry) func(*env, []zipEntry) ([]byte, error) {
	return func(_ *env, valid []zipEntry) ([]byte, error) {
		return writeZip(fn(append([]zipEntry(nil), valid...)))
	}
}

// plus returns valid with extra entries appended.
func plus(extra ...zipEntry) func(*env, []zipEntry) ([]byte, error) {
	return with(func(es []zipEntry) []zipEntry { return append(es, extra...) })
}

// replaced returns valid with the entry name's data replaced; it fails
// when the entry is missing or data left it unchanged.
func replaced(name string, data func([]byte) []byte) func(*env, []zipEntry) ([]byte, error) {
	return func(_ *env, valid []zipEntry) ([]byte, error) {
		es := append([]zipEntry(nil), valid...)
		for i := range es {
			if es[i].name == name {
				d := data(es[i].data)
				if bytes.Equal(d, es[i].data) {
					return nil, fmt.Errorf("%s: the change left it as it was:\n%s", name, d)
				}
				es[i].data = d
				return writeZip(es)
			}
		}
		return nil, fmt.Errorf("no entry %s", name)
	}
}

var evil = []byte("written by a hostile artifact\n")

// r3EvilAbs is the absolute path one hostile entry names.
const r3EvilAbs = "/tmp/palyra-bench-r3-evil.txt"

var hostileArtifacts = []hostileArtifact{
	{"not a zip", func(*env, []zipEntry) ([]byte, error) { return []byte("MZ\x90\x00 this is not a skill"), nil }},
	{"empty file", func(*env, []zipEntry) ([]byte, error) { return nil, nil }},
	{"truncated archive", func(e *env, valid []zipEntry) ([]byte, error) {
		b, err := writeZip(valid)
		return b[:len(b)/2], err
	}},
	{"zip bomb (15 MiB of zeros deflated)", plus(zipEntry{name: "assets/bomb.bin", data: make([]byte, 15<<20), method: zip.Deflate})},
	{"entry over 16 MiB (stored)", plus(zipEntry{name: "assets/big.bin", data: bytes.Repeat([]byte("0123456789abcdef"), (17<<20)/16), method: zip.Store})},
	{"path traversal ../../../", plus(zipEntry{name: "../../../evil.txt", data: evil, method: zip.Deflate})},
	{"path traversal assets/../../", plus(zipEntry{name: "assets/../../../evil.txt", data: evil, method: zip.Deflate})},
	{"absolute path", plus(zipEntry{name: r3EvilAbs, data: evil, method: zip.Deflate})},
	{"backslash traversal", plus(zipEntry{name: `assets\..\..\..\evil.txt`, data: evil, method: zip.Deflate})},
	{"NUL in a name", plus(zipEntry{name: "assets/a\x00b.txt", data: evil, method: zip.Deflate})},
	{"symlink to /etc/passwd", plus(zipEntry{name: "assets/passwd", data: []byte("/etc/passwd"), method: zip.Store, mode: fs.ModeSymlink | 0o777})},
	{"symlink to ../../..", plus(zipEntry{name: "assets/up", data: []byte("../../.."), method: zip.Store, mode: fs.ModeSymlink | 0o777})},
	{dirEntryCase, plus(zipEntry{name: "../../evil-dir/", method: zip.Store, mode: fs.ModeDir | 0o755})},
	{"device entry", plus(zipEntry{name: "assets/null", method: zip.Store, mode: fs.ModeDevice | fs.ModeCharDevice | 0o666})},
	{"duplicate skill.toml", with(func(es []zipEntry) []zipEntry {
		return append(es, zipEntry{name: "skill.toml", data: []byte(`skill_id = "bench.other"`), method: zip.Deflate})
	})},
	{"case-folded duplicate (SKILL.toml)", plus(zipEntry{name: "SKILL.toml", data: []byte(`skill_id = "bench.other"`), method: zip.Deflate})},
	{"too many entries (300)", func(_ *env, valid []zipEntry) ([]byte, error) {
		es := append([]zipEntry(nil), valid...)
		for i := range 300 {
			es = append(es, zipEntry{name: fmt.Sprintf("assets/f%03d", i), data: []byte{byte(i)}, method: zip.Store})
		}
		return writeZip(es)
	}},
	{"encrypted entry", plus(zipEntry{name: "assets/secret.bin", data: evil, method: zip.Store, flags: 1})},
	{"unsupported compression (bzip2)", plus(zipEntry{name: "assets/x.bz2", data: evil, method: 12})},
	{"oversized manifest (2 MiB)", replaced("skill.toml", func(b []byte) []byte {
		return append(b, []byte("\n# "+strings.Repeat("x", 2<<20)+"\n")...)
	})},
	{"tampered module (one byte)", replaced("modules/module.wasm", func(b []byte) []byte {
		c := bytes.Clone(b)
		c[len(c)-1] ^= 0xff
		return c
	})},
	{"tampered manifest (version)", replaced("skill.toml", func(b []byte) []byte {
		return regexp.MustCompile(`(?m)^version\s*=\s*['"]1\.0\.0['"]`).ReplaceAll(b, []byte(`version = "9.9.9"`))
	})},
	{"extra unsigned module", plus(zipEntry{name: "modules/extra.wasm", data: foreignImportModule, method: zip.Deflate})},
	{"missing signature", with(func(es []zipEntry) []zipEntry {
		var out []zipEntry
		for _, en := range es {
			if en.name != artifact.SignaturePath {
				out = append(out, en)
			}
		}
		return out
	})},
	{"garbage signature document", replaced(artifact.SignaturePath, func([]byte) []byte { return []byte(`{"signature":"AAAA"`) })},
	{"signed by an unknown key", func(e *env, _ []zipEntry) ([]byte, error) {
		seed := bytes.Repeat([]byte{0x42}, ed25519.SeedSize)
		return signedModule(e, mustRead(e, "echo.wasm"), ed25519.NewKeyFromSeed(seed))
	}},
	{"not a wasm module (signed)", func(e *env, _ []zipEntry) ([]byte, error) {
		return signedModule(e, []byte("#!/bin/sh\nrm -rf /\n"), e.key)
	}},
	{"foreign import env.exec (signed)", func(e *env, _ []zipEntry) ([]byte, error) {
		return signedModule(e, foreignImportModule, e.key)
	}},
	{"module over 8 MiB (signed)", func(e *env, _ []zipEntry) ([]byte, error) {
		return signedModule(e, withCustomSection(mustRead(e, "echo.wasm"), 9<<20), e.key)
	}},
	{"compile bomb: 300,000 empty functions (signed)", func(e *env, _ []zipEntry) ([]byte, error) {
		return signedModule(e, compileBomb(300_000), e.key)
	}},
}

// mustRead reads testdata/wasm/name, or nil.
func mustRead(e *env, name string) []byte {
	b, _ := os.ReadFile(filepath.Join(e.root, "testdata", "wasm", name))
	return b
}

// relHostileArtifacts is R3: each hostile artifact is installed on an
// install-only host (no sidecar, so no precompile) whose state dir sits
// three levels deep in a sandbox directory; every one must be refused (an
// error with a code, or a quarantined result) and nothing may change in the
// sandbox outside the state dir, nor at the absolute path one entry names.
func relHostileArtifacts(ctx context.Context, e *env) ([]relRow, error) {
	sandbox := filepath.Join(e.work, "r3-sandbox")
	state := filepath.Join(sandbox, "a", "b", "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(sandbox, "bystander.txt"), []byte("untouched\n"), 0o600); err != nil {
		return nil, err
	}
	h, _, closeHost, err := e.openHostAt(ctx, state, false, supervisor.Config{})
	if err != nil {
		return nil, err
	}
	defer closeHost()
	validBytes, err := signedModule(e, mustRead(e, "echo.wasm"), e.key)
	if err != nil {
		return nil, err
	}
	valid, err := readZip(validBytes)
	if err != nil {
		return nil, err
	}
	before, err := snapshotDir(sandbox, state)
	if err != nil {
		return nil, err
	}
	row := relRow{Scenario: "R3", Title: "hostile artifacts installed (install-only host)"}
	// The untouched base artifact installs: the refusals below are the
	// hostile parts' doing.
	res, err := h.Install(ctx, e.installRequest(validBytes))
	if err != nil || res.Status != "active" {
		return nil, fmt.Errorf("the valid base artifact: %v %+v", err, res)
	}
	if _, err := h.Remove(ctx, host.RemoveRequest{SkillID: "bench.r3"}); err != nil {
		return nil, err
	}
	codes := map[string]int{}
	var perCase, ignored []string
	for _, c := range hostileArtifacts {
		data, err := c.make(e, valid)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		res, err := h.Install(ctx, e.installRequest(data))
		var got, msg string
		switch {
		case err != nil:
			got = codeOf(err)
			if got == "audit_failed" {
				msg = err.Error()
				if i := strings.Index(msg, "security audit: "); i >= 0 {
					msg = msg[i+len("security audit: "):]
				}
			}
		case res.Status != "active":
			got = fmt.Sprintf("%s %v", res.Status, res.Reasons)
		default:
			got = "admitted (active)"
		}
		// already_installed would mean the case never reached its check.
		refused := (err != nil && !strings.HasPrefix(got, "untyped") && got != "already_installed") || (err == nil && res.Status != "active")
		if ignorableArtifacts[c.name] && !refused {
			ignored = append(ignored, c.name)
			got = "ignored (admitted)"
			refused = true
		}
		codes[got]++
		if msg != "" {
			perCase = append(perCase, fmt.Sprintf("%s → %s (%.160s)", c.name, got, msg))
		} else {
			perCase = append(perCase, c.name+" → "+got)
		}
		row.check(refused, "%s: %s", c.name, got)
		// A refused install may keep the version quarantined: make room for
		// the next case of the same skill id.
		if _, err := h.Remove(ctx, host.RemoveRequest{SkillID: "bench.r3"}); err != nil && errcode.Of(err) != "skill_not_found" {
			return nil, fmt.Errorf("after %s: remove: %w", c.name, err)
		}
	}
	after, err := snapshotDir(sandbox, state)
	if err != nil {
		return nil, err
	}
	changed := diffSnapshots(before, after)
	_, absErr := os.Stat(r3EvilAbs)
	absWritten := absErr == nil
	if absWritten {
		os.Remove(r3EvilAbs)
	}
	// The outside check is what makes an ignored case hold.
	row.check(len(changed) == 0 && !absWritten, "written outside the state dir: %v (absolute path written: %v; admitted: %v)", changed, absWritten, ignored)
	row.Figures = append(row.Figures,
		"refusals: "+counts(codes),
		fmt.Sprintf("paths changed outside the state dir: %d; absolute-path entry written: %v", len(changed), absWritten),
		strings.Join(perCase, "; "))
	return []relRow{row}, nil
}

// fileSig is what snapshotDir records of a path.
type fileSig struct {
	mode fs.FileMode
	size int64
	data string // contents of small regular files
}

// snapshotDir records every path under root except those under skip.
func snapshotDir(root, skip string) (map[string]fileSig, error) {
	out := map[string]fileSig{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		s := fileSig{mode: info.Mode(), size: info.Size()}
		if info.Mode().IsRegular() && info.Size() < 1<<20 {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s.data = string(b)
		}
		out[p] = s
		return nil
	})
	return out, err
}

// diffSnapshots names the paths added, removed or changed.
func diffSnapshots(a, b map[string]fileSig) []string {
	var out []string
	for p, s := range b {
		if old, ok := a[p]; !ok {
			out = append(out, "+"+p)
		} else if old != s {
			out = append(out, "~"+p)
		}
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			out = append(out, "-"+p)
		}
	}
	return out
}
