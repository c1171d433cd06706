package fix

// F is under testdata/: not counted.
func F() {}
