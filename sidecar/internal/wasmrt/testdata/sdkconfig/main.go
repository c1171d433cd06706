// Command sdkconfig is a Go guest built with the SDK (sdk/go/skill) that
// reads its operator config (sdk/ABI.md §3.1), for the runtime's tests.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o sdkconfig.wasm .
package main

import (
	"encoding/json"

	"github.com/palyra-go/palyra/sdk/go/skill"
)

// settings is the typed view of the config the tests send.
type settings struct {
	Endpoint string `json:"endpoint"`
	Retries  int    `json:"retries"`
	Token    string `json:"api_token"`
}

func init() {
	skill.HandleRaw("acme.config", func(c *skill.Context, _ json.RawMessage) (json.RawMessage, error) {
		return c.Config()
	})
	skill.Handle("acme.typed", func(c *skill.Context, _ struct{}) (map[string]any, error) {
		var s settings
		if err := c.ConfigInto(&s); err != nil {
			return nil, err
		}
		return map[string]any{"endpoint": s.Endpoint, "retries": s.Retries, "token_len": len(s.Token)}, nil
	})
}

func main() {}
