// Package hidden is under internal/: not public.
package hidden

// H is not counted.
func H() {}
