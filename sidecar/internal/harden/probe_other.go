//go:build !linux

package harden

import "github.com/palyra-go/palyra/internal/buildinfo"

func probe() buildinfo.KernelSupport { return buildinfo.KernelSupport{} }
