package egress

import (
	"net/netip"
	"testing"
)

func TestPublicAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		// Public.
		{"93.184.216.34", true},
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"2606:4700:4700::1111", true},
		{"2a00:1450:4001:80b::200e", true},
		{"::ffff:93.184.216.34", true},
		{"64:ff9b::5db8:d822", true}, // NAT64 of 93.184.216.34
		{"2002:5db8:d822::1", true},  // 6to4 of 93.184.216.34
		// Teredo: server 65.54.227.120, client NOT(0xa2b8:29dd) = 93.71.214.34.
		{"2001:0:4136:e378:8000:63bf:a2b8:29dd", true},
		// IPv4 special purpose.
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.0.0.1", false},
		{"100.64.0.1", false},
		{"100.127.255.254", false},
		{"127.0.0.1", false},
		{"127.255.255.255", false},
		{"169.254.169.254", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.0.0.8", false},
		{"192.0.2.1", false},
		{"192.88.99.1", false},
		{"192.168.1.1", false},
		{"198.18.0.1", false},
		{"198.19.255.255", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		// Edges just outside special ranges.
		{"172.32.0.1", true},
		{"100.128.0.1", true},
		{"198.20.0.1", true},
		{"11.0.0.1", true},
		// IPv6 special purpose.
		{"::", false},
		{"::1", false},
		{"::127.0.0.1", false}, // IPv4-compatible
		{"::8.8.8.8", false},   // IPv4-compatible, even of a public address
		{"fc00::1", false},
		{"fd00::1", false},
		{"fd00:ec2::254", false}, // AWS metadata over IPv6
		{"fe80::1", false},
		{"febf::1", false},
		{"ff02::1", false},
		{"100::1", false},
		{"64:ff9b:1::1", false},
		{"2001:db8::1", false},
		{"2001:2::1", false},
		{"2001:10::1", false},
		{"2001:20::1", false},
		{"2001:4:112::1", false}, // in 2001::/23, denied by default
		{"3fff::1", false},
		{"5f00::1", false},
		{"4000::1", false}, // outside 2000::/3
		// Embedded private IPv4.
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"64:ff9b::7f00:1", false},    // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"2002:7f00:1::1", false},     // 6to4 of 127.0.0.1
		{"2002:a00:1::1", false},      // 6to4 of 10.0.0.1
		{"2002:c0a8:101::1", false},   // 6to4 of 192.168.1.1
		// Teredo with a private server, and with a private client
		// (NOT(0x80ff:fffe) = 127.0.0.1).
		{"2001:0:a00:1::1", false},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", false},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tc.addr)
			if got := PublicAddr(a); got != tc.want {
				t.Fatalf("PublicAddr(%s) = %v, want %v", a, got, tc.want)
			}
		})
	}
	t.Run("invalid and zoned", func(t *testing.T) {
		for _, a := range []netip.Addr{{}, netip.MustParseAddr("2606:4700::1111%eth0")} {
			if PublicAddr(a) {
				t.Fatalf("PublicAddr(%v) = true", a)
			}
		}
	})
}

func TestAddrAllowed(t *testing.T) {
	tests := []struct {
		name  string
		rules Rules
		addr  string
		want  bool
	}{
		{"public", Rules{}, "8.8.8.8", true},
		{"private refused", Rules{}, "10.0.0.1", false},
		{"private allowed", Rules{AllowPrivate: true}, "10.0.0.1", true},
		{"metadata allowed by AllowPrivate", Rules{AllowPrivate: true}, "169.254.169.254", true},
		{"unspecified never", Rules{AllowPrivate: true}, "0.0.0.0", false},
		{"v6 unspecified never", Rules{AllowPrivate: true}, "::", false},
		{"multicast never", Rules{AllowPrivate: true}, "224.0.0.1", false},
		{"broadcast never", Rules{AllowPrivate: true}, "255.255.255.255", false},
		{"network listed", Rules{PrivateNetworks: []netip.Prefix{loopback4}}, "127.0.0.1", true},
		{"mapped form of a listed network", Rules{PrivateNetworks: []netip.Prefix{loopback4}}, "::ffff:127.0.0.1", true},
		{"outside the listed network", Rules{PrivateNetworks: []netip.Prefix{loopback4}}, "127.0.0.2", false},
		{"v6 network listed", Rules{PrivateNetworks: []netip.Prefix{netip.MustParsePrefix("fd00::/8")}}, "fd00::1", true},
		{"zone", Rules{AllowPrivate: true}, "fe80::1%lo", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rules.addrAllowed(netip.MustParseAddr(tc.addr)); got != tc.want {
				t.Fatalf("addrAllowed(%s) = %v, want %v", tc.addr, got, tc.want)
			}
		})
	}
}

func TestCheckURL(t *testing.T) {
	r := Rules{
		Hosts:   []string{"API.Example.com.", "*.example.org", "8.8.8.8", "[2606:4700::1111]"},
		Schemes: []string{"HTTPS"},
		Ports:   []int{443, 8443},
	}
	tests := []struct {
		url    string
		want   string // the normalized URL, or "" when refused
		reason string
	}{
		{"https://api.example.com/v1?q=1", "https://api.example.com/v1?q=1", ""},
		{"HTTPS://API.EXAMPLE.COM./v1#frag", "https://api.example.com/v1", ""},
		{"https://api.example.com:443/", "https://api.example.com/", ""},
		{"https://api.example.com:0443/", "https://api.example.com/", ""},
		{"https://api.example.com:8443/", "https://api.example.com:8443/", ""},
		{"https://a.b.example.org/", "https://a.b.example.org/", ""},
		{"https://8.8.8.8/", "https://8.8.8.8/", ""},
		{"https://[2606:4700:0::1111]/", "https://[2606:4700::1111]/", ""},
		{"https://example.org/", "", ReasonHostNotAllowed},
		{"https://xexample.org/", "", ReasonHostNotAllowed},
		{"https://api.example.com.evil.test/", "", ReasonHostNotAllowed},
		{"https://8.8.4.4/", "", ReasonHostNotAllowed},
		{"http://api.example.com/", "", ReasonSchemeNotAllowed},
		{"https://api.example.com:80/", "", ReasonPortNotAllowed},
		{"https://api.example.com:99999/", "", ReasonInvalidURL},
		{"https://user@api.example.com/", "", ReasonInvalidURL},
		{"https://api..example.com/", "", ReasonInvalidURL},
		{"https://-api.example.com/", "", ReasonInvalidURL},
		{"https://api_x.example.org/", "", ReasonInvalidURL},
		{"https://a%2eexample.org/", "", ReasonInvalidURL},
		{"mailto:someone@example.org", "", ReasonInvalidURL},
		{"https://[::1]/", "", ReasonHostNotAllowed},
		{"//api.example.com/", "", ReasonInvalidURL},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			u, err := CheckURL(r, tc.url)
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				if u.String() != tc.want {
					t.Fatalf("URL %q, want %q", u, tc.want)
				}
				return
			}
			wantOutcome(t, err, tc.reason, ErrDenied, "")
		})
	}
	t.Run("private IP literal", func(t *testing.T) {
		_, err := CheckURL(Rules{Hosts: []string{"*"}, Schemes: []string{"https"}, Ports: []int{443}}, "https://169.254.169.254/")
		wantOutcome(t, err, ReasonPrivateAddress, ErrDenied, "")
	})
}
