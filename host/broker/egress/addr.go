package egress

import (
	"net/netip"
	"strings"
)

// nonPublicV4 are the IPv4 special-purpose ranges (IANA registry, RFC 6890
// and successors) that are not globally reachable unicast destinations.
var nonPublicV4 = mustPrefixes(
	"0.0.0.0/8",          // "this network", includes the unspecified 0.0.0.0
	"10.0.0.0/8",         // RFC 1918
	"100.64.0.0/10",      // CGNAT shared address space
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local, includes the 169.254.169.254 metadata service
	"172.16.0.0/12",      // RFC 1918
	"192.0.0.0/24",       // IETF protocol assignments
	"192.0.2.0/24",       // TEST-NET-1
	"192.88.99.0/24",     // deprecated 6to4 relay anycast
	"192.168.0.0/16",     // RFC 1918
	"198.18.0.0/15",      // benchmarking
	"198.51.100.0/24",    // TEST-NET-2
	"203.0.113.0/24",     // TEST-NET-3
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved, includes the broadcast 255.255.255.255
	"255.255.255.255/32", // limited broadcast (inside 240/4; listed for the reader)
)

// nonPublicV6 are IPv6 ranges inside 2000::/3 (the only IPv6 space
// PublicAddr accepts at all) that are not globally reachable destinations.
// The ranges that embed an IPv4 address (6to4, Teredo) are handled apart.
var nonPublicV6 = mustPrefixes(
	"2001:2::/48",   // benchmarking
	"2001:10::/28",  // ORCHID
	"2001:20::/28",  // ORCHIDv2
	"2001:db8::/32", // documentation
	"3fff::/20",     // documentation (RFC 9637)
	"5f00::/16",     // SRv6 SIDs (RFC 9602)
)

var (
	v6GlobalUnicast = netip.MustParsePrefix("2000::/3")
	v6Teredo        = netip.MustParsePrefix("2001::/32")
	v6ProtoAssign   = netip.MustParsePrefix("2001::/23")
	v6SixToFour     = netip.MustParsePrefix("2002::/16")
	v6NAT64         = netip.MustParsePrefix("64:ff9b::/96")
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// PublicAddr reports whether a is a globally reachable unicast address. It
// is deny-by-default: an IPv6 address must lie in 2000::/3 and outside the
// special-purpose ranges; an IPv4 address outside every special-purpose
// range. IPv4-mapped and NAT64 (64:ff9b::/96) forms are judged by the IPv4
// address they carry, and so are 6to4 (2002::/16) and Teredo (2001::/32,
// both the server and the client address); IPv4-compatible (::/96) and
// every address with a zone are not public.
func PublicAddr(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	if a.Is4In6() {
		return publicV4(a.Unmap())
	}
	if a.Is4() {
		return publicV4(a)
	}
	switch {
	case v6NAT64.Contains(a):
		b := a.As16()
		return publicV4(netip.AddrFrom4([4]byte(b[12:16])))
	case !v6GlobalUnicast.Contains(a):
		// ::/128, ::1, ::/96 compatible, fc00::/7 (including the
		// fd00:ec2::254 metadata service), fe80::/10, ff00::/8,
		// 64:ff9b:1::/48, 100::/64 and everything unassigned.
		return false
	case v6Teredo.Contains(a):
		b := a.As16()
		server := netip.AddrFrom4([4]byte(b[4:8]))
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return publicV4(server) && publicV4(client)
	case v6SixToFour.Contains(a):
		b := a.As16()
		return publicV4(netip.AddrFrom4([4]byte(b[2:6])))
	}
	for _, p := range nonPublicV6 {
		if p.Contains(a) {
			return false
		}
	}
	// The rest of 2001::/23 holds a few global anycast services among
	// protocol assignments; deny-by-default keeps all of it out.
	return !v6ProtoAssign.Contains(a)
}

func publicV4(a netip.Addr) bool {
	for _, p := range nonPublicV4 {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// neverDialable reports whether a is no unicast destination at all:
// unspecified, multicast or broadcast (also in their mapped forms). Such an
// address is refused even when the rules allow private networks, since
// dialling 0.0.0.0 or :: reaches the local host on common systems.
func neverDialable(a netip.Addr) bool {
	u := a.Unmap()
	return !u.IsValid() || u.IsUnspecified() || u.IsMulticast() || u == netip.AddrFrom4([4]byte{255, 255, 255, 255})
}

// addrAllowed reports whether the rules let a request reach a.
func (r *Rules) addrAllowed(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" || neverDialable(a) {
		return false
	}
	if PublicAddr(a) {
		return true
	}
	if r.AllowPrivate {
		return true
	}
	u := a.Unmap()
	for _, p := range r.PrivateNetworks {
		if p.Contains(u) || p.Contains(a) {
			return true
		}
	}
	return false
}

// privateRule describes the private-address rule for an error message.
func (r *Rules) privateRule() string {
	if r.AllowPrivate {
		return "private networks allowed; unspecified, multicast and broadcast never"
	}
	if len(r.PrivateNetworks) == 0 {
		return "public addresses only"
	}
	ns := make([]string, len(r.PrivateNetworks))
	for i, p := range r.PrivateNetworks {
		ns[i] = p.String()
	}
	return "public addresses and " + strings.Join(ns, ", ")
}
