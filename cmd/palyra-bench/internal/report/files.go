package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Names of the files WriteFiles creates.
const (
	MarkdownFile = "report.md"
	JSONFile     = "report.json"
	SVGFile      = "ratios.svg"
)

// WriteFiles writes the report to dir as MarkdownFile, JSONFile and SVGFile,
// creating dir (mode 0o755, with its parents) if needed. All three are
// rendered before any is written, so an invalid report writes nothing and
// returns an error wrapping [ErrInvalid]. Each file is replaced atomically:
// written to a temporary file in dir, synced, then renamed over the old one,
// so a reader sees the old or the new file, never a part. A failure with one
// file does not stop the others; the errors are joined.
func (r *Report) WriteFiles(dir string) error {
	outputs := []struct {
		name   string
		render func(io.Writer) error
	}{
		{MarkdownFile, r.Markdown},
		{JSONFile, r.JSON},
		{SVGFile, r.SVG},
	}
	contents := make([][]byte, len(outputs))
	for i, o := range outputs {
		var buf bytes.Buffer
		if err := o.render(&buf); err != nil {
			return fmt.Errorf("report: render %s: %w", o.name, err)
		}
		contents[i] = buf.Bytes()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report: create output directory: %w", err)
	}
	var errs []error
	for i, o := range outputs {
		if err := writeFileAtomic(filepath.Join(dir, o.name), contents[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := syncDir(dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// writeFileAtomic replaces path by a file holding data, mode 0o644, through
// a synced temporary file in the same directory. The temporary file is
// removed on failure.
func writeFileAtomic(path string, data []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("report: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close() // may already be closed; the write error is the one to report
			_ = os.Remove(tmp)
			err = fmt.Errorf("report: write %s: %w", path, err)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// syncDir flushes dir's entries, making the renames durable. Some platforms
// (Windows) and file systems cannot sync a directory; that is not an error
// worth failing a benchmark for, so only a failure to open dir is reported.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("report: sync output directory: %w", err)
	}
	_ = d.Sync() // best effort, see above
	if err := d.Close(); err != nil {
		return fmt.Errorf("report: sync output directory: %w", err)
	}
	return nil
}
