package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/palyra-go/palyra/host/broker/egress"
)

// ssrfResolver answers R6's DNS names the way an attacker's DNS would.
type ssrfResolver map[string][]netip.Addr

func (r ssrfResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func addrList(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// countingListener accepts and closes connections on addr, counting them.
type countingListener struct {
	ln   net.Listener
	seen atomic.Int64
	wg   sync.WaitGroup
}

func listenCounting(network, addr string) (*countingListener, error) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	c := &countingListener{ln: ln}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.seen.Add(1)
			conn.Close()
		}
	}()
	return c, nil
}

func (c *countingListener) close() { c.ln.Close(); c.wg.Wait() }

// relSSRF is R6: URLs aimed at loopback, private, link-local and metadata,
// multicast and broadcast addresses, in every spelling (IPv6 forms,
// IPv4-mapped, decimal, octal, hex, short forms), DNS names resolving to
// them, and redirects to them, through the egress client with the broadest
// grant (any host, the listener's port). Each must be refused by the rules
// (a DenyError, not a failed dial), and the 127.0.0.1 (and ::1) listener
// on that port must see no connection.
func relSSRF(ctx context.Context, e *env) ([]relRow, error) {
	target, err := listenCounting("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer target.close()
	port := target.ln.Addr().(*net.TCPAddr).Port
	p := strconv.Itoa(port)
	// The same port on ::1, when the machine has IPv6 loopback.
	seen := target.seen.Load
	if t6, err := listenCounting("tcp6", "[::1]:"+p); err == nil {
		defer t6.close()
		seen = func() int64 { return target.seen.Load() + t6.seen.Load() }
	}
	// An allowed redirector on 127.0.0.2 (granted as a private network):
	// it redirects to its ?to= parameter.
	var redirHits atomic.Int64
	rln, err := net.Listen("tcp4", "127.0.0.2:0")
	if err != nil {
		return nil, err
	}
	rsrv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirHits.Add(1)
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan struct{})
	go func() { defer close(served); _ = rsrv.Serve(rln) }()
	defer func() { rsrv.Close(); <-served }()
	rport := rln.Addr().(*net.TCPAddr).Port

	rules := egress.Rules{
		Hosts: []string{"*"}, Schemes: []string{"http"}, Ports: []int{port, rport},
		PrivateNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")},
		MaxRedirects:    3, MaxResponseBytes: 1 << 20, RequestTimeout: 5 * time.Second,
	}
	c := egress.New(egress.Config{Resolver: ssrfResolver{
		"localhost":             addrList("127.0.0.1", "::1"),
		"loop.attacker.test":    addrList("127.0.0.1"),
		"loop6.attacker.test":   addrList("::1"),
		"mapped.attacker.test":  addrList("::ffff:127.0.0.1"),
		"ten.attacker.test":     addrList("10.0.0.1"),
		"meta.attacker.test":    addrList("169.254.169.254"),
		"mcast.attacker.test":   addrList("224.0.0.251"),
		"mixed.attacker.test":   addrList("127.0.0.1", "192.168.0.1"),
		"redirect.allowed.test": addrList("127.0.0.2"),
	}, DialTimeout: 2 * time.Second})

	hosts := []string{
		// loopback, every spelling
		"127.0.0.1", "127.1", "127.0.1", "0x7f.0.0.1", "0177.0.0.1", "0x7f000001", "2130706433", "017700000001",
		"127.000.000.001", "127.0.0.1.", "127.255.255.254", "[::1]", "[0:0:0:0:0:0:0:1]", "[::ffff:127.0.0.1]",
		"[::ffff:7f00:1]", "[::127.0.0.1]", "[64:ff9b::127.0.0.1]", "[::1%25lo]", "0.0.0.0", "0", "[::]",
		// private networks and CGNAT
		"10.0.0.1", "172.16.0.1", "192.168.1.1", "100.64.0.1", "[fc00::1]", "[fd12:3456::1]", "[::ffff:10.0.0.1]",
		// link-local and cloud metadata
		"169.254.169.254", "0xa9fea9fe", "2852039166", "0251.0376.0251.0376", "169.254.0.1", "[fe80::1]",
		"[fd00:ec2::254]", "[::ffff:169.254.169.254]", "100.100.100.200",
		// multicast and broadcast
		"224.0.0.1", "239.255.255.250", "255.255.255.255", "[ff02::1]", "[ff05::1:3]",
		// names that resolve to the above
		"localhost", "loop.attacker.test", "loop6.attacker.test", "mapped.attacker.test", "ten.attacker.test",
		"meta.attacker.test", "mcast.attacker.test", "mixed.attacker.test",
	}
	type ssrfCase struct{ name, url string }
	var cases []ssrfCase
	for _, h := range hosts {
		cases = append(cases, ssrfCase{h, "http://" + h + ":" + p + "/"})
	}
	redir := "http://redirect.allowed.test:" + strconv.Itoa(rport) + "/?to="
	for _, to := range []string{"http://127.0.0.1:" + p + "/", "http://2130706433:" + p + "/", "http://[::1]:" + p + "/",
		"http://169.254.169.254:" + p + "/latest/meta-data/", "http://loop.attacker.test:" + p + "/", "http://localhost:" + p + "/"} {
		cases = append(cases, ssrfCase{"redirect to " + to, redir + to})
	}

	row := relRow{Scenario: "R6", Title: "SSRF forms through the egress firewall (grant: any host, the listener's port)"}
	reasons := map[string]int{}
	for _, cs := range cases {
		_, err := c.Do(ctx, rules, egress.Request{URL: cs.url})
		var deny *egress.DenyError
		ok := errors.As(err, &deny)
		if ok {
			reasons[deny.Reason]++
		}
		row.check(ok, "%s: %v", cs.name, err)
	}
	row.check(seen() == 0, "the loopback listener saw %d connections", seen())
	row.Figures = append(row.Figures,
		fmt.Sprintf("refused by the rules before connecting: %d of %d URLs (%d addresses and names, %d redirects)", sumCounts(reasons), len(cases), len(hosts), len(cases)-len(hosts)),
		"reasons: "+counts(reasons),
		fmt.Sprintf("connections seen by the 127.0.0.1/::1 listener: %d (must be 0); redirector hits: %d", seen(), redirHits.Load()))
	return []relRow{row}, nil
}

func sumCounts(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
