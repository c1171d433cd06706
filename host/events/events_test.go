package events_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/palyra-go/palyra/host/events"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestDeliveryInOrder(t *testing.T) {
	var b events.Bus
	s := b.Subscribe(context.Background(), 10)
	defer s.Close()
	for i := range 5 {
		b.Publish(events.Event{ID: int64(i), Kind: events.SkillInstalled})
	}
	for i := range 5 {
		e := <-s.C()
		if e.ID != int64(i) || e.At.IsZero() {
			t.Fatalf("event %d = %+v", i, e)
		}
	}
}

func TestSlowSubscriberDropsNeverBlocks(t *testing.T) {
	var b events.Bus
	slow := b.Subscribe(context.Background(), 2)
	fast := b.Subscribe(context.Background(), 100)
	defer slow.Close()
	defer fast.Close()
	for i := range 10 {
		b.Publish(events.Event{ID: int64(i)})
	}
	if got := slow.Dropped(); got != 8 {
		t.Fatalf("slow dropped %d, want 8", got)
	}
	if got := fast.Dropped(); got != 0 {
		t.Fatalf("fast dropped %d, want 0", got)
	}
	if len(fast.C()) != 10 || len(slow.C()) != 2 {
		t.Fatalf("buffered: fast %d slow %d", len(fast.C()), len(slow.C()))
	}
}

func TestCloseByContextAndIdempotent(t *testing.T) {
	var b events.Bus
	ctx, cancel := context.WithCancel(context.Background())
	s := b.Subscribe(ctx, 1)
	if b.Subscribers() != 1 {
		t.Fatal("not subscribed")
	}
	cancel()
	if _, ok := <-s.C(); ok {
		t.Fatal("channel not closed after cancel")
	}
	s.Close()
	s.Close()
	if b.Subscribers() != 0 {
		t.Fatal("still subscribed")
	}
	b.Publish(events.Event{}) // no panic on a closed subscription
}

func TestConcurrentPublishSubscribe(t *testing.T) {
	var b events.Bus
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 200 {
				b.Publish(events.Event{ID: int64(i)})
			}
		}()
		go func() {
			defer wg.Done()
			for range 50 {
				ctx, cancel := context.WithCancel(context.Background())
				s := b.Subscribe(ctx, 4)
				cancel()
				s.Close()
			}
		}()
	}
	wg.Wait()
	if b.Subscribers() != 0 {
		t.Fatalf("leaked %d subscriptions", b.Subscribers())
	}
}

func ExampleBus() {
	var bus events.Bus
	sub := bus.Subscribe(context.Background(), 16)
	defer sub.Close()
	bus.Publish(events.Event{Kind: events.SkillQuarantined, SkillID: "acme.echo", Version: "1.0.0", Reason: "audit failed"})
	e := <-sub.C()
	fmt.Println(e.Kind, e.SkillID, e.Reason)
	// Output: skill:quarantined acme.echo audit failed
}

// TestSubscribeWithEndedContext: a subscription made with a context that
// has already ended closes at once (run with -race: the closing goroutine
// and Subscribe share the subscription).
func TestSubscribeWithEndedContext(t *testing.T) {
	var b events.Bus
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 100; i++ {
		s := b.Subscribe(ctx, 1)
		if _, ok := <-s.C(); ok {
			t.Fatal("channel not closed")
		}
		s.Close()
	}
	if n := b.Subscribers(); n != 0 {
		t.Fatalf("%d subscribers left", n)
	}
}
