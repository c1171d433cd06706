package channels_test

import (
	"context"
	"fmt"

	"github.com/palyra-go/palyra/host/channels"
)

// An embedding application registers its own channel; the broker delivers
// the messages of skills granted that channel.
func ExampleRegistry() {
	r := channels.NewRegistry()
	_ = r.Register("ops.alerts", channels.ChannelFunc(func(_ context.Context, m channels.Message) error {
		fmt.Printf("%s says %q on %s\n", m.SkillID, m.Text, m.Channel)
		return nil
	}))
	_, err := r.Send(context.Background(), channels.Message{Channel: "ops.alerts", SkillID: "acme.monitor", Text: "disk 91% full"})
	fmt.Println("error:", err)
	// Output:
	// acme.monitor says "disk 91% full" on ops.alerts
	// error: <nil>
}
