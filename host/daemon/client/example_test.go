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
	"github.com/palyra-go/palyra/host/events"
	"github.com/palyra-go/palyra/host/install"
)

// A client of a daemon on this machine: the token comes from the state
// directory's admin-token file.
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
	list, err := c.List(ctx, install.ListOptions{CurrentOnly: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range list.Entries {
		fmt.Println(s.SkillID, s.Version, s.Status)
	}
	res, err := c.Call(ctx, "palyra.echo", "palyra.echo", json.RawMessage(`{"text":"hi"}`), 5*time.Second)
	switch {
	case errors.Is(err, host.ErrQuarantined):
		// The daemon's code maps back to the library's sentinel.
		fmt.Println("quarantined:", err)
	case err != nil:
		fmt.Println(err)
	default:
		fmt.Println(string(res.Output))
	}
}

// Following the event stream from the start of the journal.
func ExampleClient_Events() {
	c, err := client.New(os.Getenv("PALYRA_DAEMON_URL"), os.Getenv("PALYRA_ADMIN_TOKEN"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = c.Events(ctx, 0, func(ev events.Event) error {
		fmt.Println(ev.ID, ev.Kind, ev.SkillID, ev.Reason)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
}
