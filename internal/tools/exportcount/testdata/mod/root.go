// Package fixture is the root package of exportcount's test module.
package fixture

// Exported is one exported func: 1.
func Exported() {}

func unexported() {}

// Counter is an exported type (1) with one exported method (1).
type Counter struct{ N int }

// Inc is counted as Counter.Inc.
func (c *Counter) Inc() { c.N++ }

func (c *Counter) dec() { c.N-- }

// Pair is generic (1); its method counts too (1).
type Pair[K comparable, V any] struct {
	K K
	V V
}

// Key is counted as Pair.Key.
func (p Pair[K, V]) Key() K { return p.K }

type hidden struct{}

// Visible is exported but its receiver is not: not counted.
func (hidden) Visible() {}

// A var block with two exported names (2) and one unexported.
var (
	First, second = 1, 2
	Third         = 3
)

// A const group: two exported (2), blank and unexported ones not.
const (
	Red = iota
	_
	green
	Blue
)

// Total for this package: 1 + 1 + 1 + 1 + 1 + 2 + 2 = 9, plus Tagged (other files) = 10.
