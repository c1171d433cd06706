package skill

import (
	"encoding/json"
	"slices"

	"github.com/palyra-go/palyra/sdk/go/skill/internal/abi"
)

// Config returns the skill's operator configuration for this call
// (sdk/ABI.md §3.1): one JSON object with a value for every key of the
// manifest's [config] schema the operator set, else its default. The host
// checked it against the schema, and a call whose required keys are not
// all set never reaches the skill. Keys the operator marked sensitive are
// in it in clear: keep them out of logs and outputs. A skill without
// [config] gets {}.
//
// The config is read from the host once per call (the operator may change
// it between calls); the result is the caller's to keep.
func (c *Context) Config() (json.RawMessage, error) {
	if c.config == nil {
		n := c.h.ConfigLen()
		if n < 0 {
			return nil, Errorf(CodeABIError, "config-len returned %d", n)
		}
		if n > abi.MaxConfigBytes {
			return nil, Errorf(CodeABIError, "config document is %d bytes, over the %d-byte limit", n, abi.MaxConfigBytes)
		}
		buf := make([]byte, n)
		if n > 0 {
			if got := c.h.ConfigRead(buf); got != n {
				return nil, Errorf(CodeABIError, "config-read returned %d, want %d", got, n)
			}
		}
		if len(buf) == 0 {
			buf = []byte("{}")
		}
		c.config = buf
	}
	return slices.Clone(json.RawMessage(c.config)), nil
}

// ConfigInto decodes the skill's operator configuration (see Config) into
// v, a pointer to a struct whose json tags name the config keys, or to a
// map.
func (c *Context) ConfigInto(v any) error {
	raw, err := c.Config()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return Errorf(CodeABIError, "decode config: %v", err)
	}
	return nil
}
