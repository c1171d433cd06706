package report

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "out") // does not exist yet
	r := fixture()
	if err := r.WriteFiles(dir); err != nil {
		t.Fatalf("WriteFiles: %v", err)
	}
	info, err := os.Stat(dir)
	if err != nil || !info.IsDir() {
		t.Fatalf("output directory not created: %v", err)
	}
	if info.Mode().Perm()&0o700 != 0o700 {
		t.Errorf("output directory mode %v", info.Mode().Perm())
	}

	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{SVGFile, JSONFile, MarkdownFile}; !slices.Equal(names, want) {
		t.Fatalf("directory holds %v, want exactly %v, sorted, and no temporary files", names, want)
	}

	renderers := map[string]func(io.Writer) error{
		MarkdownFile: r.Markdown,
		JSONFile:     r.JSON,
		SVGFile:      r.SVG,
	}
	for name, render := range renderers {
		var want bytes.Buffer
		if err := render(&want); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s differs from the renderer's output", name)
		}
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s mode = %v, want 0644", name, fi.Mode().Perm())
		}
	}

	// A second run replaces the files.
	r.Notes = append(r.Notes, "second run")
	if err := r.WriteFiles(dir); err != nil {
		t.Fatalf("WriteFiles again: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(md, []byte("- second run\n")) {
		t.Error("report.md was not replaced by the second run")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%d entries after the second run, want 3", len(entries))
	}
}

func TestWriteFilesInvalidWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	r := fixture()
	r.Rows[0].Goal.Op = "<"
	if err := r.WriteFiles(dir); !errors.Is(err, ErrInvalid) {
		t.Fatalf("WriteFiles = %v, want ErrInvalid", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output directory exists after a failed render: %v", err)
	}
}

func TestWriteFilesUnwritableDirectory(t *testing.T) {
	// A regular file where the directory should be: MkdirAll fails.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := fixture().WriteFiles(filepath.Join(file, "out"))
	if err == nil {
		t.Fatal("WriteFiles under a regular file succeeded")
	}
	if errors.Is(err, ErrInvalid) {
		t.Errorf("WriteFiles = %v, want an I/O error, not ErrInvalid", err)
	}
}

func TestWriteFileAtomicLeavesNoTempOnFailure(t *testing.T) {
	dir := t.TempDir()
	// The target is a non-empty directory, so the final rename fails.
	target := filepath.Join(dir, "report.md")
	if err := os.MkdirAll(filepath.Join(target, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(target, []byte("x")); err == nil {
		t.Fatal("writeFileAtomic over a non-empty directory succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "report.md" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v after a failed write, want only report.md", names)
	}
}
