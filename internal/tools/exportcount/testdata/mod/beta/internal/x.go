// Package internal is itself named internal: not public.
package internal

// X is not counted.
var X = 1
