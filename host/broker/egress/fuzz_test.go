package egress

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// FuzzCheckURL: CheckURL never panics, and whatever it accepts has an
// allowed scheme, a granted host, an allowed port, no userinfo, and is
// accepted again unchanged.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://api.example.com/v1?q=1",
		"https://API.example.com.:8443/x#y",
		"https://a.b.example.org/",
		"https://example.org/",
		"https://user:pw@api.example.com/",
		"https://[::ffff:8.8.8.8]/",
		"https://8.8.8.8:443/",
		"https://[fe80::1%25eth0]/",
		"https://127.1/",
		"https://0x7f.1/",
		"https://xn--pi-6kc.example.org/",
		"https://\u0430pi.example.com/",
		"http://api.example.com/",
		"https://api.example.com:0/",
		"//api.example.com",
		"https:api.example.com",
		"",
	} {
		f.Add(s)
	}
	r := Rules{
		Hosts:   []string{"api.example.com", "*.example.org", "8.8.8.8", "10.1.2.3"},
		Schemes: []string{"https"},
		Ports:   []int{443, 8443},
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := CheckURL(r, raw)
		if err != nil {
			if u != nil {
				t.Fatal("URL returned with an error")
			}
			return
		}
		if u.Scheme != "https" || u.User != nil || u.Opaque != "" {
			t.Fatalf("accepted %q as %q", raw, u)
		}
		host := u.Hostname()
		granted := host == "api.example.com" || host == "8.8.8.8" ||
			strings.HasSuffix(host, ".example.org") && len(host) > len(".example.org")
		if !granted {
			t.Fatalf("accepted %q with host %q", raw, host)
		}
		for i := 0; i < len(host); i++ {
			c := host[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
				t.Fatalf("accepted %q with host %q", raw, host)
			}
		}
		port := 443
		if ps := u.Port(); ps != "" {
			p, err := strconv.Atoi(ps)
			if err != nil {
				t.Fatalf("accepted %q with port %q", raw, ps)
			}
			port = p
		}
		if port != 443 && port != 8443 {
			t.Fatalf("accepted %q with port %d", raw, port)
		}
		again, err := CheckURL(r, u.String())
		if err != nil || again.String() != u.String() {
			t.Fatalf("normalized %q to %q, which checks as %v, %v", raw, u, again, err)
		}
	})
}

// FuzzPublicAddr: PublicAddr agrees with itself on the IPv4-mapped form of
// an IPv4 address, and never calls public what netip classifies as
// loopback, private, link-local, multicast or unspecified.
func FuzzPublicAddr(f *testing.F) {
	for _, s := range []string{"8.8.8.8", "127.0.0.1", "::1", "fd00:ec2::254", "64:ff9b::7f00:1", "2002:a00:1::1", "2001:0:4136:e378:8000:63bf:80ff:fffe"} {
		a := netip.MustParseAddr(s).As16()
		f.Add(a[:])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 4 && len(b) != 16 {
			return
		}
		a, _ := netip.AddrFromSlice(b)
		pub := PublicAddr(a)
		if a.Is4() {
			mapped := netip.AddrFrom16(a.As16())
			if PublicAddr(mapped) != pub {
				t.Fatalf("%v and %v disagree", a, mapped)
			}
		}
		u := a.Unmap()
		if pub && (u.IsLoopback() || u.IsPrivate() || u.IsLinkLocalUnicast() || u.IsLinkLocalMulticast() ||
			u.IsMulticast() || u.IsInterfaceLocalMulticast() || u.IsUnspecified()) {
			t.Fatalf("PublicAddr(%v) = true", a)
		}
		if pub && !u.IsGlobalUnicast() {
			t.Fatalf("PublicAddr(%v) = true for a non-global-unicast address", a)
		}
	})
}
