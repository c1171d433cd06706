// Package proto holds Palyra-Go's wire contracts (.proto sources under
// versioned packages such as palyra/sidecar/v1) and the Go code generated from
// them by `buf generate`. The generated code is committed.
package proto
