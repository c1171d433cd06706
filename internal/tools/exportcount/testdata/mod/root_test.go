package fixture

// TestOnly is in a test file: not counted.
func TestOnly() {}
