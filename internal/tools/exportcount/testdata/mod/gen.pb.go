package fixture

// Generated is in a *.pb.go file: not counted.
type Generated struct{}
