// Command tool is package main: not public.
package main

// Main is not counted.
func Main() {}

func main() {}
