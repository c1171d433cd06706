package hidden

// H is in a hidden directory: not counted.
func H() {}
