package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/palyra-go/palyra/host"
)

// Reconnection of a followed event stream: after a broken stream the
// client reconnects at once, then waits resumeFirstWait, doubling up to
// resumeMaxWait, and gives up after resumeAttempts connections in a row
// that got no stream.
const (
	resumeFirstWait = 250 * time.Millisecond
	resumeMaxWait   = 4 * time.Second
	resumeAttempts  = 6
)

// Events implements host.Service over GET /v1/events (server-sent
// events): the journal events after req.After (req.After < 0: none of the
// past), then, with req.Follow, live ones until ctx ends. A followed
// stream that breaks (the daemon restarted, a proxy dropped the
// connection) is resumed after the last journal event delivered, so no
// journaled event is lost or delivered twice; hook outcomes, which are not
// journaled, that happen while it is down are missed. When the daemon
// cannot be reached (at first, or again after a few attempts over some
// seconds) the stream ends with an ErrTransport error. An
// error of fn ends the stream with that error.
func (c *Client) Events(ctx context.Context, req host.EventsRequest, fn func(host.Event) error) error {
	after := req.After
	failures := 0
	resuming := false // a stream was open once: a failure is resumed
	for {
		opened, err := c.stream(ctx, after, req.Follow, func(ev host.Event) error {
			if ev.ID > 0 {
				after = ev.ID
			}
			return fn(ev)
		})
		var fe fnError
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &fe):
			return fe.err
		case err == nil && !req.Follow:
			return nil
		case err != nil && (!errors.Is(err, ErrTransport) || !req.Follow || !resuming && !opened):
			// The daemon refused the stream (auth, a bad request), could
			// not be reached at all, or broke a replay.
			return err
		}
		resuming = true
		if opened {
			failures = 0
		} else if failures++; failures >= resumeAttempts {
			return err
		}
		if failures > 0 {
			wait := min(resumeFirstWait<<(failures-1), resumeMaxWait)
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
	}
}

// fnError is an error of the caller's fn, returned as is.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// stream reads one connection's events into fn and reports whether the
// daemon answered with a stream. A stream that ends while following, or
// breaks, is an ErrTransport error.
func (c *Client) stream(ctx context.Context, after int64, follow bool, fn func(host.Event) error) (bool, error) {
	q := url.Values{}
	if after >= 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if !follow {
		q.Set("follow", "false")
	}
	req, where, err := c.request(ctx, http.MethodGet, "/v1/events", q, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.http.Do(req)
	if err != nil {
		return false, fmt.Errorf("%w: GET %s: %v", ErrTransport, where, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return false, errorOf(resp.StatusCode, http.MethodGet, "/v1/events", data)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev host.Event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return true, fmt.Errorf("%w: event: %v", ErrTransport, err)
		}
		if err := fn(ev); err != nil {
			return true, fnError{err}
		}
	}
	if err := sc.Err(); err != nil {
		return true, fmt.Errorf("%w: reading the event stream: %v", ErrTransport, err)
	}
	if follow {
		return true, fmt.Errorf("%w: the daemon ended the event stream", ErrTransport)
	}
	return true, nil
}
