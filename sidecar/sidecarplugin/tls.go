package sidecarplugin

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sync"
	"time"

	"github.com/palyra-go/palyra/internal/textutil"
)

// The supervisor and its sidecars authenticate each other with mutual TLS
// over Ed25519 keys pinned per sidecar, in place of go-plugin's AutoMTLS.
// AutoMTLS makes a P-521 ECDSA certificate at each end of every sidecar
// start and verifies four P-521 signatures in the handshake: 14 to 18 ms
// of a 24 to 28 ms cold start on two cores (palyra-bench C). Ed25519 does
// the same in well under a millisecond. The channels are AutoMTLS's: the
// supervisor's public key reaches the sidecar in its environment
// (ClientKeyEnv), set at exec by the supervisor alone; the sidecar's
// public key comes back as the first line of its stdout (ServerKeyLine),
// a pipe only the sidecar writes, before go-plugin's handshake line. Each
// end then accepts a TLS peer only if the peer's certificate carries
// exactly the key announced to it, and TLS makes the peer prove it holds
// the private key (CertificateVerify). Neither private key leaves its
// process.

// ClientKeyEnv names the environment variable in which the supervisor gives
// a sidecar the Ed25519 public key of its own TLS certificate (unpadded
// base64url). A sidecar started without it leaves TLS to go-plugin
// (AutoMTLS for a go-plugin client that asks for it).
const ClientKeyEnv = "PALYRA_SIDECAR_TLS_CLIENT_KEY"

// ServerKeyLinePrefix starts the line a sidecar started with ClientKeyEnv
// writes first on its stdout: the prefix, the Ed25519 public key of its TLS
// certificate (unpadded base64url) and a newline.
const ServerKeyLinePrefix = "palyra-sidecar-tls-key|"

// MaxServerKeyLineBytes bounds that line, newline included: the prefix
// and 43 characters of key fit with room to spare.
const MaxServerKeyLineBytes = 128

var (
	errNoPeerCert   = errors.New("the TLS peer presented no certificate")
	errPeerKey      = errors.New("the TLS peer's certificate does not carry the key announced for it")
	errNotAnnounced = errors.New("the sidecar has not announced its TLS key yet")
)

// Identity is one end's TLS certificate over a new Ed25519 key.
type Identity struct {
	// Certificate is the self-signed certificate and its private key.
	Certificate tls.Certificate
	// PublicKey is the key to announce to the peer.
	PublicKey ed25519.PublicKey
}

// NewIdentity makes an Ed25519 key and a self-signed certificate over it.
// Only the key matters to the peer (PinnedConfig); the certificate is the
// form TLS carries it in.
func NewIdentity() (*Identity, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tls identity: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("tls identity: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(100 * 365 * 24 * time.Hour), // pinned by key, not by validity
		DNSNames:     []string{"localhost"},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		return nil, fmt.Errorf("tls identity: %w", err)
	}
	return &Identity{Certificate: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}, PublicKey: pub}, nil
}

// EncodeKey encodes an Ed25519 public key as ClientKeyEnv and the server key
// line carry it.
func EncodeKey(k ed25519.PublicKey) string { return base64.RawURLEncoding.EncodeToString(k) }

// DecodeKey decodes an Ed25519 public key encoded by EncodeKey.
func DecodeKey(s string) (ed25519.PublicKey, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("tls key %q: %w", s, err)
	}
	if len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("tls key %q: %d bytes, want %d", s, len(b), ed25519.PublicKeySize)
	}
	// The decoder skips '\r' and '\n': only the canonical form passes.
	if EncodeKey(b) != s {
		return nil, fmt.Errorf("tls key %q: not in canonical unpadded base64url", s)
	}
	return ed25519.PublicKey(b), nil
}

// PinnedConfig is the tls.Config of one end, for every connection between
// the supervisor and a sidecar in either role (go-plugin's GRPCBroker
// serves and dials with the same config): TLS 1.3, self presented as id,
// and a peer accepted only when its leaf certificate carries exactly the
// Ed25519 key peer returns (peer is asked at each handshake; an error
// refuses it). The certificate chain is not verified against a pool: the
// pinned key is the whole trust decision, checked in VerifyConnection,
// which runs in both roles after TLS has verified the peer's signature
// over the handshake with that key.
func PinnedConfig(id *Identity, peer func() (ed25519.PublicKey, error)) *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{id.Certificate},
		MinVersion:   tls.VersionTLS13,
		ServerName:   "localhost",
		// Chain and name verification are replaced by the key pin below.
		InsecureSkipVerify: true, //nolint:gosec // the peer's key is pinned in VerifyConnection
		ClientAuth:         tls.RequireAnyClientCert,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errNoPeerCert
			}
			want, err := peer()
			if err != nil {
				return err
			}
			got, ok := cs.PeerCertificates[0].PublicKey.(ed25519.PublicKey)
			if !ok || !got.Equal(want) {
				return errPeerKey
			}
			return nil
		},
	}
}

// TLSProvider is the goplugin.ServeConfig.TLSProvider of a sidecar started
// with ClientKeyEnv set to clientKey (the supervisor's key, as encoded
// there), or nil when clientKey is empty: TLS is then go-plugin's own
// (AutoMTLS when its client asks for it). go-plugin calls the provider
// before it prints its handshake line, and before it replaces os.Stdout;
// the provider makes this sidecar's identity, writes its key line to
// stdout (the process's stdout, the pipe the supervisor reads) and returns
// the config that accepts only clientKey. An error (a malformed clientKey)
// makes go-plugin end Serve before its handshake line, so the supervisor
// sees no sidecar rather than one it cannot authenticate.
func TLSProvider(clientKey string, stdout io.Writer) func() (*tls.Config, error) {
	if clientKey == "" {
		return nil
	}
	return func() (*tls.Config, error) {
		key, err := DecodeKey(clientKey)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ClientKeyEnv, err)
		}
		id, err := NewIdentity()
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(stdout, ServerKeyLine(id.PublicKey)); err != nil {
			return nil, fmt.Errorf("announcing the TLS key: %w", err)
		}
		return PinnedConfig(id, func() (ed25519.PublicKey, error) { return key, nil }), nil
	}
}

// ServerKeyLine is the line a sidecar writes first on its stdout to
// announce key.
func ServerKeyLine(key ed25519.PublicKey) string {
	return ServerKeyLinePrefix + EncodeKey(key) + "\n"
}

// KeyLineReader reads a sidecar's stdout for go-plugin: it takes the first
// line, the sidecar's server key line, for itself and passes everything
// after it through. A first line that is not a valid key line (another
// prefix, a bad key, longer than MaxServerKeyLineBytes, or the end of the
// output before its newline) makes every Read fail, so go-plugin never
// reads a handshake line from such a sidecar. Like any io.Reader, it is
// read from one goroutine at a time; Key may be called from any, and never
// waits for the sidecar's output.
type KeyLineReader struct {
	rc    io.ReadCloser
	br    *bufio.Reader
	first bool // the first line was read (Read's own)

	mu  sync.Mutex
	key ed25519.PublicKey
	err error // errNotAnnounced until the first line is judged
}

// NewKeyLineReader returns a KeyLineReader over rc.
func NewKeyLineReader(rc io.ReadCloser) *KeyLineReader {
	// The buffer holds the whole key line, so ReadSlice sees its end.
	return &KeyLineReader{rc: rc, br: bufio.NewReaderSize(rc, MaxServerKeyLineBytes), err: errNotAnnounced}
}

// Read reads the output after the key line.
func (r *KeyLineReader) Read(p []byte) (int, error) {
	if !r.first {
		r.first = true
		key, err := readKeyLine(r.br) // outside mu: Key never waits for it
		r.mu.Lock()
		r.key, r.err = key, err
		r.mu.Unlock()
	}
	if _, err := r.Key(); err != nil {
		return 0, err
	}
	return r.br.Read(p)
}

// Close closes the underlying stdout.
func (r *KeyLineReader) Close() error { return r.rc.Close() }

// Key returns the key the sidecar announced, or why there is none (its
// first line has not been read yet, or was not a valid key line).
func (r *KeyLineReader) Key() (ed25519.PublicKey, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.key, r.err
}

// readKeyLine reads and parses the server key line from br, whose buffer
// is MaxServerKeyLineBytes.
func readKeyLine(br *bufio.Reader) (ed25519.PublicKey, error) {
	line, err := br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, fmt.Errorf("sidecar stdout: the first line is over %d bytes, not a TLS key line", MaxServerKeyLineBytes)
	case errors.Is(err, io.EOF):
		return nil, fmt.Errorf("sidecar stdout ended before its TLS key line (%d bytes read): %w", len(line), io.ErrUnexpectedEOF)
	case err != nil:
		return nil, fmt.Errorf("sidecar stdout, reading its TLS key line: %w", err)
	}
	rest, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\n")), []byte(ServerKeyLinePrefix))
	if !ok {
		return nil, fmt.Errorf("sidecar stdout: the first line %q is not a TLS key line (%q...)", textutil.Ellipsize(string(line), 40, "..."), ServerKeyLinePrefix)
	}
	key, err := DecodeKey(string(rest))
	if err != nil {
		return nil, fmt.Errorf("sidecar stdout: %w", err)
	}
	return key, nil
}
