package e2e_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host"
	"github.com/palyra-go/palyra/host/broker/egress"
	"github.com/palyra-go/palyra/host/policy"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/host/vault"
	"github.com/palyra-go/palyra/internal/testskill"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// resolver is a fixed DNS: names map to addresses.
type resolver map[string][]netip.Addr

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var _ egress.Resolver = resolver{}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// testResolver: api.example.com is the test server on 127.0.0.1; the other
// names point where an attacker would like them to.
var testResolver = resolver{
	"api.example.com":      addrs("127.0.0.1"),
	"loopback.example.com": addrs("127.0.0.3"),
	"v6loop.example.com":   addrs("::1"),
	"mixed.example.com":    addrs("127.0.0.1", "10.0.0.1"),
	"metadata.example.com": addrs("169.254.169.254"),
}

// server is a test HTTP server on 127.0.0.1 that counts its requests.
type server struct {
	*httptest.Server
	port int
	hits chan *http.Request
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{hits: make(chan *http.Request, 64)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.hits <- r:
		default:
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
	s.port = s.Listener.Addr().(*net.TCPAddr).Port
	return s
}

// url returns http://<host>:<port><path> for the server's port.
func (s *server) url(hostname, path string) string {
	return "http://" + hostname + ":" + strconv.Itoa(s.port) + path
}

// testProfile allows plain http to the server's port and loopback only at
// 127.0.0.1, with the given extra TOML.
func testProfile(t testing.TB, port int, extra string) *policy.Profile {
	t.Helper()
	p, err := policy.Parse([]byte(fmt.Sprintf(`
[http]
allowed_schemes = ["http", "https"]
allowed_ports = [%d, 443]
allowed_private_networks = ["127.0.0.1/32"]
max_response_bytes = 1048576
max_redirects = 3
%s`, port, extra)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// openHost opens a host on a fresh state dir with prof, the test resolver,
// a fixed vault key and the run's log collector.
func openHost(t testing.TB, state string, prof *policy.Profile) *host.Host {
	t.Helper()
	ctx := context.Background()
	sock, err := os.MkdirTemp("", "e2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	v, err := vault.Open(vault.Config{StateDir: state, Key: testVaultKey})
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Open(ctx, host.Config{
		StateDir:    state,
		SidecarPath: sidecarPath,
		Policy:      prof,
		Vault:       v,
		Egress:      egress.Config{Resolver: testResolver},
		Logger:      hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Trace, JSONFormat: true}),
		Supervisor:  supervisor.Config{SocketDir: sock, IdleTimeout: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if entries, _ := os.ReadDir(sock); len(entries) > 0 {
			t.Errorf("socket dirs left: %v", entries)
		}
	})
	return h
}

var testVaultKey = []byte("0123456789abcdef0123456789abcdef")

// setSecret stores a secret and remembers its value for the log scan.
func setSecret(t *testing.T, h *host.Host, name, value string) {
	t.Helper()
	secretsSeen.Store(value, true)
	n, err := vault.ParseName(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Vault().Set(context.Background(), n, []byte(value)); err != nil {
		t.Fatal(err)
	}
}

var publisherKey = testskill.Key(7)

// installExample installs an example's module under its skill.toml, with
// edit applied to the manifest text.
func installExample(t *testing.T, h *host.Host, name, wasm string, edit func(string) string) *host.InstallResult {
	t.Helper()
	dir := examplebuild.MustDir(t, name)
	m, err := os.ReadFile(filepath.Join(dir, "skill.toml"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	text := string(m)
	if edit != nil {
		text = edit(text)
	}
	return installArtifact(t, h, testskill.Build(t, text, mod, publisherKey))
}

// installRequest installs data trusting the test publisher key for
// "palyra" and "acme".
func installRequest(data []byte) host.InstallRequest {
	pub := hex.EncodeToString(publisherKey.Public().(ed25519.PublicKey))
	return host.InstallRequest{
		Artifact:          data,
		TrustedPublishers: []host.TrustedKey{{Publisher: "palyra", PublicKeyHex: pub}, {Publisher: "acme", PublicKeyHex: pub}},
	}
}

func installArtifact(t testing.TB, h *host.Host, data []byte) *host.InstallResult {
	t.Helper()
	res, err := h.Install(context.Background(), installRequest(data))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "active" {
		t.Fatalf("installed %s: status %s %v", res.SkillID, res.Status, res.Reasons)
	}
	return res
}
