package supervisor

import (
	"encoding/json"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	sidecarv1 "github.com/palyra-go/palyra/proto/palyra/sidecar/v1"
)

// resultOf converts an InvokeResponse (nil: none) into a Result.
func resultOf(id string, r *sidecarv1.InvokeResponse) *Result {
	if r == nil {
		return nil
	}
	res := &Result{
		InvocationID: id,
		Output:       json.RawMessage(r.GetOutput()),
		ExitCode:     r.GetExitCode(),
		LogsDropped:  r.GetLogsDropped(),
		TrapCode:     r.GetTrapCode(),
	}
	if len(res.Output) == 0 {
		res.Output = nil
	}
	if st := r.GetStats(); st != nil {
		res.Stats = Stats{
			FuelConsumed:     st.GetFuelConsumed(),
			InitFuelConsumed: st.GetInitFuelConsumed(),
			PeakMemoryBytes:  st.GetPeakMemoryBytes(),
			WallTime:         st.GetWallTime().AsDuration(),
			CapabilityCalls:  st.GetCapabilityCalls(),
			Prepared:         st.GetPrepared(),
			FuelLowerBound:   st.GetFuelConsumedLowerBound(),
		}
	}
	for _, l := range r.GetLogs() {
		res.Logs = append(res.Logs, LogRecord{Level: LogLevelName(l.GetLevel()), Message: l.GetMessage()})
	}
	if te := r.GetToolError(); te != nil {
		res.ToolError = &ToolError{Code: te.GetCode(), Message: te.GetMessage()}
	}
	return res
}

// limitsProto converts l; extra is added to a set timeout (tests only).
func limitsProto(l Limits, extra time.Duration) *sidecarv1.Limits {
	out := &sidecarv1.Limits{
		Fuel:               l.Fuel,
		MemoryBytes:        l.MemoryBytes,
		TableElements:      l.TableElements,
		Instances:          l.Instances,
		Tables:             l.Tables,
		Memories:           l.Memories,
		MaxCapabilityCalls: l.MaxCapabilityCalls,
	}
	if l.Timeout > 0 {
		out.Timeout = durationpb.New(l.Timeout + extra)
	}
	return out
}

func grantsProto(g Grants) *sidecarv1.Grants {
	return &sidecarv1.Grants{
		HttpHosts:       g.HTTPHosts,
		SecretKeys:      g.SecretKeys,
		StoragePrefixes: g.StoragePrefixes,
		Channels:        g.Channels,
	}
}

func toolsProto(tools []Tool) []*sidecarv1.Tool {
	out := make([]*sidecarv1.Tool, 0, len(tools))
	for _, tl := range tools {
		// Tool ids only: the supervisor checks the schemas (schemas.go).
		out = append(out, &sidecarv1.Tool{Id: tl.ID})
	}
	return out
}

// logLevelPrefix is the protobuf prefix of the LogLevel enum's names.
const logLevelPrefix = "LOG_LEVEL_"

// LogLevelName is a guest log level as the APIs write it: a lower-case
// word (trace, debug, info, warn, error; unspecified for a record without
// one), never the protobuf enum name.
func LogLevelName(l sidecarv1.LogLevel) string {
	return normalizeLevel(l.String())
}

// normalizeLevel maps a protobuf enum name (LOG_LEVEL_INFO, which earlier
// versions wrote) to its word; a word stays as it is.
func normalizeLevel(s string) string {
	if strings.HasPrefix(s, logLevelPrefix) {
		return strings.ToLower(strings.TrimPrefix(s, logLevelPrefix))
	}
	return s
}

// UnmarshalJSON decodes a log record, accepting the protobuf enum names
// of the level that daemons before the lower-case words wrote.
func (r *LogRecord) UnmarshalJSON(b []byte) error {
	type plain LogRecord
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	p.Level = normalizeLevel(p.Level)
	*r = LogRecord(p)
	return nil
}
