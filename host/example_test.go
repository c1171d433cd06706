package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/palyra-go/palyra/host"
)

// Open a host on a state directory, install a signed skill trusting its
// publisher's key, call one of its tools, close. buildEcho (a test helper)
// packages and signs the echo example; an application reads a
// .palyra-skill file instead.
func Example() {
	ctx := context.Background()
	state, _ := os.MkdirTemp("", "palyra-example-")
	defer os.RemoveAll(state)

	h, err := host.Open(ctx, host.Config{StateDir: state, SidecarPath: sidecarPath})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close(ctx)

	data, keyHex, err := buildEcho()
	if err != nil {
		fmt.Println(err)
		return
	}
	// Trust the publisher's key, as `palyra skills install
	// --trusted-publisher palyra=HEX` does.
	res, err := h.Install(ctx, host.InstallRequest{
		Artifact:          data,
		TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: keyHex}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("installed", res.SkillID, res.Version, res.Status)

	out, err := h.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hello"}`)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out.Output))
	// Output:
	// installed palyra.echo 0.1.0 active
	// {"echo":"hello"}
}
