// Package output is how every palyra command prints its result: one
// format chosen by the global -o/--output flag (text, wide, json, yaml;
// --json is -o json), aligned tables for lists, key=value lines and
// labelled blocks for single records, with values quoted when a reader
// could misread them (empty, containing spaces, quotes or control
// characters).
//
// json and yaml print the command's result value: yaml is the JSON
// document converted (sigs.k8s.io/yaml), so both carry exactly the same
// field names, the ones of the result's json tags. text and wide print what
// the command renders for people; wide adds a table's wide columns.
package output
