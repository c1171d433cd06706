package egress_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/palyra-go/palyra/host/broker/egress"
)

// A skill granted one local test server calls it with a secret the broker
// injects; the guest never sees the value.
func ExampleClient_Do() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer example-token" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"items":[]}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())

	rules := egress.Rules{
		Hosts:   []string{"127.0.0.1"},
		Schemes: []string{"http"},
		Ports:   []int{port},
		// Loopback is not public: the operator allows this one address.
		PrivateNetworks:  []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		MaxRequestBytes:  1 << 20,
		MaxResponseBytes: 4 << 20,
		RequestTimeout:   10 * time.Second,
	}
	c := egress.New(egress.Config{})
	resp, err := c.Do(context.Background(), rules, egress.Request{
		URL:    srv.URL + "/v1/items",
		Header: map[string]string{"accept": "application/json"},
		Inject: []egress.Injection{{Header: "authorization", Value: "Bearer example-token"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, string(resp.Body))

	// The cloud metadata service is never reachable without a grant.
	rules.Hosts = []string{"*"}
	rules.Ports = []int{80}
	_, err = c.Do(context.Background(), rules, egress.Request{URL: "http://169.254.169.254/latest/meta-data/"})
	var deny *egress.DenyError
	if errors.As(err, &deny) {
		fmt.Println(deny.Reason)
	}
	// Output:
	// 200 {"items":[]}
	// private_address
}

// CheckURL validates a destination ahead of time, without network access.
func ExampleCheckURL() {
	rules := egress.Rules{Hosts: []string{"*.example.com"}, Schemes: []string{"https"}, Ports: []int{443}}
	for _, raw := range []string{"https://Hooks.Example.com./in", "https://example.com/in", "https://hooks.example.com:8443/in"} {
		u, err := egress.CheckURL(rules, raw)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(u)
	}
	// Output:
	// https://hooks.example.com/in
	// egress denied: host "example.com" is not in the skill's HTTP grant (*.example.com)
	// egress denied: port 8443 of host "hooks.example.com" is not in the skill's HTTP rules (443)
}
