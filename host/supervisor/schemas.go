package supervisor

import (
	"fmt"
	"sync"

	"github.com/palyra-go/palyra/internal/toolschema"
)

// A Target's tool schemas are checked here, on the supervisor's side,
// never in the sidecar (which runs the guest and links no schema library):
// the input before the call is admitted, the output once the sidecar
// answered. The host checks its manifests' schemas itself and sends none.

// maxCompiledSchemas bounds the supervisor's cache of compiled schemas;
// when it is full it starts again empty.
const maxCompiledSchemas = 1024

// schemaCache holds compiled tool schemas by their documents: input
// schema, then output schema (two levels, so that a lookup indexes with the
// byte slices and copies nothing).
type schemaCache struct {
	mu sync.Mutex
	m  map[string]map[string]*toolschema.Validator
	n  int
}

// validator is the compiled schemas of t's tool toolID, nil when it has
// none (or t names no such tool: the sidecar refuses the tool).
func (c *schemaCache) validator(t *Target, toolID string) (*toolschema.Validator, error) {
	var tl *Tool
	for i := range t.Tools {
		if t.Tools[i].ID == toolID {
			tl = &t.Tools[i]
			break
		}
	}
	if tl == nil || (len(tl.InputSchema) == 0 && len(tl.OutputSchema) == 0) {
		return nil, nil
	}
	c.mu.Lock()
	v := c.m[string(tl.InputSchema)][string(tl.OutputSchema)]
	c.mu.Unlock()
	if v != nil {
		return v, nil
	}
	v, err := toolschema.New(tl.InputSchema, tl.OutputSchema)
	if err != nil {
		return nil, fmt.Errorf("skill %s version %s tool %s: %w", t.SkillID, t.Version, toolID, err)
	}
	c.mu.Lock()
	if c.m == nil || c.n >= maxCompiledSchemas {
		c.m, c.n = make(map[string]map[string]*toolschema.Validator), 0
	}
	byOut := c.m[string(tl.InputSchema)]
	if byOut == nil {
		byOut = make(map[string]*toolschema.Validator)
		c.m[string(tl.InputSchema)] = byOut
	}
	if _, ok := byOut[string(tl.OutputSchema)]; !ok {
		c.n++
	}
	byOut[string(tl.OutputSchema)] = v
	c.mu.Unlock()
	return v, nil
}

// checkInput validates input against v's input schema.
func checkInput(v *toolschema.Validator, toolID string, input []byte) error {
	if v == nil || !v.HasInput() {
		return nil
	}
	doc, err := toolschema.Decode(input)
	if err != nil {
		return fmt.Errorf("%w: tool %s: input is not JSON: %v", ErrInvalidInput, toolID, err)
	}
	if err := v.ValidateInput(doc); err != nil {
		return fmt.Errorf("%w: tool %s: %v", ErrInvalidInput, toolID, err)
	}
	return nil
}

// checkOutput validates res's output against v's output schema and
// clears the output when it fails.
func checkOutput(v *toolschema.Validator, toolID string, res *Result) error {
	if v == nil || !v.HasOutput() || res == nil {
		return nil
	}
	doc, err := toolschema.Decode(res.Output)
	if err == nil {
		err = v.ValidateOutput(doc)
	}
	if err != nil {
		res.Output = nil
		return fmt.Errorf("%w: tool %s: %v", ErrInvalidOutput, toolID, err)
	}
	return nil
}
