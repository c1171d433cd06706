// Package nested is a module of its own: not counted.
package nested

// N is not counted.
func N() {}
