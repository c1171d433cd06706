//go:build linux

package fixture

// Tagged is declared for two build constraints and counted once.
func Tagged() {}
