package skip

// S is in a directory the go tool ignores: not counted.
func S() {}
