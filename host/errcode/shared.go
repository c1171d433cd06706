package errcode

// Sentinels shared by packages that do not import each other. The host's
// supervisor and the sidecar's runtime report the same call outcomes, and
// host/manifest, host, host/mcpserver and the sidecar refuse the same tool
// calls; each of them re-exports the sentinels it returns (for example
// supervisor.ErrTimeout = errcode.ErrTimeout), so callers compare with
// whichever name they have at hand and get the same answer.
var (
	// ErrTimeout: a call did not finish before its deadline (the request's,
	// the skill's quota or the operator's policy, whichever is first).
	ErrTimeout = New("timeout", "call timed out")
	// ErrCanceled: a call was canceled by its caller before it finished.
	ErrCanceled = New("canceled", "call canceled")
	// ErrUnknownTool: a call names a tool that the skill does not declare,
	// or that no active skill offers.
	ErrUnknownTool = New("unknown_tool", "unknown tool")
	// ErrInvalidInput: a tool input is not JSON, is too large, or does not
	// match the tool's input_schema. The tool did not run.
	ErrInvalidInput = New("invalid_input", "invalid tool input")
	// ErrInvalidOutput: a tool output is not JSON or does not match the
	// tool's output_schema.
	ErrInvalidOutput = New("invalid_output", "invalid tool output")
	// ErrOutputTooLarge: a tool's output is over the cap of the runtime or
	// of the host.
	ErrOutputTooLarge = New("output_too_large", "tool output too large")
	// ErrCompileBudgetExceeded: compiling a module at admission ran past
	// the CPU-time or memory cap of the precompile child (host/supervisor
	// reports it, host/install quarantines the version with it).
	ErrCompileBudgetExceeded = New("compile_budget_exceeded", "compiling the module exceeded the compile budget")
)
