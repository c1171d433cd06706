package feed_test

import (
	"testing"

	"github.com/palyra-go/palyra/host/feed"
)

// FuzzParse: Parse never panics, and whatever it accepts respects the
// limits and re-signs to a feed that parses to the same entries.
func FuzzParse(f *testing.F) {
	good, err := feed.Sign(sample(1), key(1))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"payloadType":"` + feed.PayloadType + `","payload":"e30=","signatures":[{"keyid":"","sig":""}]}`))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := feed.Parse(data)
		if err != nil {
			return
		}
		if len(s.Feed.Entries) > feed.MaxEntries || len(data) > feed.MaxFileBytes || s.Feed.Serial == 0 {
			t.Fatalf("accepted a feed over a limit: %d entries, %d bytes, serial %d", len(s.Feed.Entries), len(data), s.Feed.Serial)
		}
		again, err := feed.Sign(s.Feed, key(1))
		if err != nil {
			t.Fatalf("an accepted feed does not re-sign: %v", err)
		}
		s2, err := feed.Parse(again)
		if err != nil || len(s2.Feed.Entries) != len(s.Feed.Entries) {
			t.Fatalf("re-signed feed: %v", err)
		}
	})
}
