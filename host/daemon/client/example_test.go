package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
)

// A client of a daemon on this machine: the token comes from the state
// directory's admin-token file. The client is a host.Service, as a local
// host is.
func Example() {
	ctx := context.Background()
	token, err := daemon.ReadToken(daemon.TokenPath(os.Getenv("PALYRA_STATE_DIR")))
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := client.New("http://127.0.0.1:7142", token, client.WithPrincipal("user:ops"))
	if err != nil {
		fmt.Println(err)
		return
	}
	var svc host.Service = c
	list, err := svc.List(ctx, host.ListRequest{CurrentOnly: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range list.Entries {
		fmt.Println(s.SkillID, s.Version, s.Status)
	}
	res, err := svc.Call(ctx, host.CallRequest{SkillID: "palyra.echo", ToolID: "palyra.echo", Input: json.RawMessage(`{"text":"hi"}`), Timeout: 5 * time.Second})
	switch {
	case errors.Is(err, host.ErrQuarantined):
		// The daemon's code maps back to the library's sentinel.
		fmt.Println("quarantined:", err)
	case host.CallResultOf(err) != nil:
		// The call reached the sidecar: its logs and tool error came back.
		fmt.Println("failed:", err, host.CallResultOf(err).ToolError)
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Println(string(res.Output))
	}
	// Who acts, for one request.
	if _, err := svc.Quarantine(host.WithPrincipal(ctx, "user:alice"), host.StatusRequest{SkillID: "palyra.echo", Reason: "under review"}); err != nil {
		fmt.Println(err)
	}
}

// Following the event stream from the start of the journal; a broken
// connection is resumed where it stopped.
func ExampleClient_Events() {
	c, err := client.New(os.Getenv(client.EnvURL), os.Getenv(client.EnvToken))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = c.Events(ctx, host.EventsRequest{After: 0, Follow: true}, func(ev host.Event) error {
		fmt.Println(ev.ID, ev.Kind, ev.SkillID, ev.Reason)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
}
