package host_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/supervisor"
)

// TestEventsRaceClose follows events from many goroutines while the host
// closes: every stream ends (nil, or host_closed when it came too late),
// none starts a follower Close does not wait for (goleak in TestMain and
// the race detector catch one).
func TestEventsRaceClose(t *testing.T) {
	h, _ := openHostWith(t, supervisor.Config{})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- h.Events(ctx, host.EventsRequest{After: -1, Follow: true}, func(host.Event) error { return nil })
		}()
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, host.ErrClosed) {
			t.Errorf("a stream ended with %v", err)
		}
	}
}
