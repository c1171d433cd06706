package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testResolver maps names to addresses and records every lookup. A name
// with several answers gives the i-th answer on the i-th lookup and the
// last one after that.
type testResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	fail    map[string]error
	calls   map[string]int
}

func newResolver() *testResolver {
	return &testResolver{answers: map[string][][]netip.Addr{}, fail: map[string]error{}, calls: map[string]int{}}
}

// set makes host resolve to addrs on every lookup.
func (r *testResolver) set(host string, addrs ...string) *testResolver {
	return r.seq(host, addrs)
}

// seq makes host resolve to answers[i] on lookup i.
func (r *testResolver) seq(host string, answers ...[]string) *testResolver {
	r.mu.Lock()
	defer r.mu.Unlock()
	var as [][]netip.Addr
	for _, ans := range answers {
		var a []netip.Addr
		for _, s := range ans {
			a = append(a, netip.MustParseAddr(s))
		}
		as = append(as, a)
	}
	r.answers[host] = as
	return r
}

func (r *testResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if network != "ip" {
		return nil, errors.New("test resolver: unexpected network " + network)
	}
	n := r.calls[host]
	r.calls[host] = n + 1
	if err := r.fail[host]; err != nil {
		return nil, err
	}
	as, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return as[min(n, len(as)-1)], nil
}

func (r *testResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

var loopback4 = netip.MustParsePrefix("127.0.0.1/32")

// srvTimeout is the request timeout of tests that do not test timeouts:
// long enough never to fire on a loaded machine.
const srvTimeout = 10 * time.Second

// server starts an httptest server on 127.0.0.1 and returns it with its
// port.
func server(t testing.TB, h http.Handler) (*httptest.Server, int) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, portOf(t, srv.Listener.Addr())
}

func portOf(t testing.TB, a net.Addr) int {
	t.Helper()
	_, ps, err := net.SplitHostPort(a.String())
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(ps)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// localRules are rules for plain HTTP to the given hosts on the given
// ports, reachable on 127.0.0.1 only.
func localRules(hosts []string, ports ...int) Rules {
	return Rules{
		Hosts:            hosts,
		Schemes:          []string{"http"},
		Ports:            ports,
		PrivateNetworks:  []netip.Prefix{loopback4},
		MaxRedirects:     3,
		MaxRequestBytes:  1 << 10,
		MaxResponseBytes: 4 << 10,
		RequestTimeout:   srvTimeout,
	}
}

// releaseOnCleanup closes ch when the test ends. Call it after starting
// the server whose handlers wait on ch, so that ch is closed before the
// server's Close waits for them.
func releaseOnCleanup(t testing.TB, ch chan struct{}) {
	t.Helper()
	t.Cleanup(func() { close(ch) })
}
