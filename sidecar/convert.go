package sidecar

import (
	"fmt"

	"google.golang.org/protobuf/types/known/durationpb"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
	"github.com/palyra-go/palyra/sidecar/internal/wasmrt"
)

// limitsFromProto converts wire limits; nil is all defaults.
func limitsFromProto(l *sidecarv1.Limits) (wasmrt.Limits, error) {
	if l == nil {
		return wasmrt.Limits{}, nil
	}
	if l.GetMemoryBytes() < 0 || l.GetTableElements() < 0 || l.GetInstances() < 0 ||
		l.GetTables() < 0 || l.GetMemories() < 0 || l.GetTimeout().AsDuration() < 0 {
		return wasmrt.Limits{}, fmt.Errorf("%w: negative limit", ErrInvalidRequest)
	}
	if l.GetTimeout() != nil {
		if err := l.GetTimeout().CheckValid(); err != nil {
			return wasmrt.Limits{}, fmt.Errorf("%w: limits.timeout: %w", ErrInvalidRequest, err)
		}
	}
	return wasmrt.Limits{
		Fuel:               l.GetFuel(),
		MemoryBytes:        l.GetMemoryBytes(),
		TableElements:      l.GetTableElements(),
		Instances:          l.GetInstances(),
		Tables:             l.GetTables(),
		Memories:           l.GetMemories(),
		Timeout:            l.GetTimeout().AsDuration(),
		MaxCapabilityCalls: int(l.GetMaxCapabilityCalls()),
	}, nil
}

func grantsFromProto(g *sidecarv1.Grants) wasmrt.Grants {
	return wasmrt.Grants{
		HTTPHosts:       g.GetHttpHosts(),
		SecretKeys:      g.GetSecretKeys(),
		StoragePrefixes: g.GetStoragePrefixes(),
		Channels:        g.GetChannels(),
	}
}

func cacheStatusToProto(s wasmrt.CacheStatus) sidecarv1.CacheStatus {
	switch s {
	case wasmrt.CacheDisabled:
		return sidecarv1.CacheStatus_CACHE_STATUS_DISABLED
	case wasmrt.CacheHit:
		return sidecarv1.CacheStatus_CACHE_STATUS_HIT
	case wasmrt.CacheMiss:
		return sidecarv1.CacheStatus_CACHE_STATUS_MISS
	case wasmrt.CacheRejected:
		return sidecarv1.CacheStatus_CACHE_STATUS_REJECTED
	}
	return sidecarv1.CacheStatus_CACHE_STATUS_UNSPECIFIED
}

var logSources = map[wasmrt.LogSource]sidecarv1.LogSource{
	wasmrt.SourceLog:    sidecarv1.LogSource_LOG_SOURCE_LOG,
	wasmrt.SourceStdout: sidecarv1.LogSource_LOG_SOURCE_STDOUT,
	wasmrt.SourceStderr: sidecarv1.LogSource_LOG_SOURCE_STDERR,
}

// logLevelToProto maps runtime levels (trace = 0) to wire levels (trace = 1).
func logLevelToProto(l wasmrt.LogLevel) sidecarv1.LogLevel {
	if l < wasmrt.LevelTrace || l > wasmrt.LevelError {
		return sidecarv1.LogLevel_LOG_LEVEL_UNSPECIFIED
	}
	return sidecarv1.LogLevel(int32(l) + 1)
}

// resultToProto fills resp from res (which Invoke never returns nil).
func resultToProto(res *wasmrt.Result, resp *sidecarv1.InvokeResponse) {
	if res == nil {
		return
	}
	resp.Output = res.Output
	resp.ExitCode = res.ExitCode
	resp.Entrypoint = res.Entrypoint
	resp.LogsDropped = uint32(max(res.LogsDropped, 0))
	resp.Stats = &sidecarv1.Stats{
		FuelConsumed:     res.Stats.FuelConsumed,
		InitFuelConsumed: res.Stats.InitFuelConsumed,
		PeakMemoryBytes:  res.Stats.PeakMemoryBytes,
		WallTime:         durationpb.New(res.Stats.WallTime),
		CapabilityCalls:  uint32(max(res.Stats.CapabilityCalls, 0)),
		Prepared:         res.Stats.Prepared,

		FuelConsumedLowerBound: res.Stats.FuelLowerBound,
	}
	if len(res.Logs) > 0 {
		resp.Logs = make([]*sidecarv1.LogRecord, len(res.Logs))
		for i, r := range res.Logs {
			resp.Logs[i] = &sidecarv1.LogRecord{
				Level:   logLevelToProto(r.Level),
				Source:  logSources[r.Source],
				Message: utf8(r.Message),
			}
		}
	}
}
