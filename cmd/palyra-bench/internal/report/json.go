package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// JSON writes the report as indented JSON, the stable --json output of
// palyra-bench (see the package documentation for its shape). Each row has
// its ratio recomputed and a computed "goal_met" (true, false or null). It
// returns an error wrapping [ErrInvalid] for an invalid report, before
// writing anything.
func (r *Report) JSON(w io.Writer) error {
	if err := r.Validate(); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "<=" stays readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("report: encode json: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("report: write json: %w", err)
	}
	return nil
}
