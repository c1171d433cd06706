// Package alpha has one exported type and one exported const.
package alpha

// T is counted.
type T int

// C is counted.
const C T = 1
