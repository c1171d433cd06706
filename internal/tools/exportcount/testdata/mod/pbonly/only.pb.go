package pbonly

// P is generated: the package has no counted file and is not listed.
type P struct{}
