// Package tool is under cmd/: not public.
package tool

// L is not counted.
func L() {}
