package supervisor

import (
	"encoding/json"
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
		}
	}
	for _, l := range r.GetLogs() {
		res.Logs = append(res.Logs, LogRecord{Level: l.GetLevel().String(), Message: l.GetMessage()})
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
		out = append(out, &sidecarv1.Tool{Id: tl.ID, InputSchema: tl.InputSchema, OutputSchema: tl.OutputSchema})
	}
	return out
}
