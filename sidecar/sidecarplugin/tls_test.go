package sidecarplugin

import (
	"bytes"
	"crypto/ed25519"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func newID(t *testing.T) *Identity {
	t.Helper()
	id, err := NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func pin(k ed25519.PublicKey) func() (ed25519.PublicKey, error) {
	return func() (ed25519.PublicKey, error) { return k, nil }
}

// handshake runs a TLS handshake between client and server configs over
// a loopback TCP connection (kernel buffers: an end refusing the other
// can send its alert while the other still writes) and returns each end's
// error.
func handshake(t *testing.T, client, server *tls.Config) (clientErr, serverErr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		s, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer s.Close()
		srv := tls.Server(s, server)
		err = srv.Handshake()
		if err == nil {
			// The client's certificate is checked after the server's
			// Finished: read the client's first byte to see the outcome.
			_, err = srv.Read(make([]byte, 1))
		}
		done <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl := tls.Client(c, client)
	clientErr = cl.Handshake()
	if clientErr == nil {
		_, clientErr = cl.Write([]byte{1})
	}
	if clientErr != nil {
		c.Close() // the server, waiting for the client's bytes, sees the end
	}
	return clientErr, <-done
}

// TestPinnedConfig checks the mutual TLS both ends of a sidecar
// connection use: each accepts the other only with the key announced for
// it, in both roles.
func TestPinnedConfig(t *testing.T) {
	sup, sc, other := newID(t), newID(t), newID(t)
	noCert := &tls.Config{MinVersion: tls.VersionTLS13, InsecureSkipVerify: true} //nolint:gosec // a client with no certificate
	// In TLS 1.3 the client finishes its handshake before the server has
	// checked the client's certificate: a refused client may see its end
	// succeed (clientAny), and the server's refusal is what counts.
	tests := []struct {
		name               string
		client, server     *tls.Config
		clientOK, serverOK bool
		clientAny          bool
		clientErr          error
		serverErr          error
	}{
		{name: "both keys pinned right",
			client: PinnedConfig(sup, pin(sc.PublicKey)), server: PinnedConfig(sc, pin(sup.PublicKey)), clientOK: true, serverOK: true},
		{name: "the server is not the sidecar announced",
			client: PinnedConfig(sup, pin(sc.PublicKey)), server: PinnedConfig(other, pin(sup.PublicKey)), clientErr: errPeerKey},
		{name: "the client is not the supervisor announced",
			client: PinnedConfig(other, pin(sc.PublicKey)), server: PinnedConfig(sc, pin(sup.PublicKey)), clientAny: true, serverErr: errPeerKey},
		{name: "a client with no certificate",
			client: noCert, server: PinnedConfig(sc, pin(sup.PublicKey)), clientAny: true},
		{name: "no key announced yet",
			client: PinnedConfig(sup, func() (ed25519.PublicKey, error) { return nil, errors.New("not announced") }),
			server: PinnedConfig(sc, pin(sup.PublicKey))},
		{name: "roles swapped, as go-plugin's broker does",
			client: PinnedConfig(sc, pin(sup.PublicKey)), server: PinnedConfig(sup, pin(sc.PublicKey)), clientOK: true, serverOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cerr, serr := handshake(t, tt.client, tt.server)
			if (!tt.clientAny && (cerr == nil) != tt.clientOK) || (serr == nil) != tt.serverOK {
				t.Fatalf("client error %v, server error %v; want client ok %v, server ok %v", cerr, serr, tt.clientOK, tt.serverOK)
			}
			if tt.clientErr != nil && !errors.Is(cerr, tt.clientErr) {
				t.Errorf("client error %v, want %v", cerr, tt.clientErr)
			}
			if tt.serverErr != nil && !errors.Is(serr, tt.serverErr) {
				t.Errorf("server error %v, want %v", serr, tt.serverErr)
			}
		})
	}
}

func TestKeyLineReader(t *testing.T) {
	key := newID(t).PublicKey
	line := ServerKeyLine(key)
	tests := []struct {
		name    string
		out     string
		wantErr string // "" when the line is valid
	}{
		{name: "key line then the handshake", out: line + "1|1|unix|/tmp/x/plugin.sock|grpc||\nmore\n"},
		{name: "key line only", out: line},
		{name: "go-plugin's handshake first", out: "1|1|unix|/tmp/x/plugin.sock|grpc||\n", wantErr: "is not a TLS key line"},
		{name: "empty output", out: "", wantErr: "ended before its TLS key line"},
		{name: "no newline", out: strings.TrimSuffix(line, "\n"), wantErr: "ended before its TLS key line"},
		{name: "over the limit", out: ServerKeyLinePrefix + strings.Repeat("A", MaxServerKeyLineBytes) + "\n", wantErr: "over 128 bytes"},
		{name: "not base64url", out: ServerKeyLinePrefix + strings.Repeat("+", 43) + "\n", wantErr: "illegal base64"},
		{name: "padded", out: ServerKeyLinePrefix + EncodeKey(key) + "=\n", wantErr: "illegal base64"},
		{name: "short key", out: ServerKeyLinePrefix + EncodeKey(key[:31]) + "\n", wantErr: "31 bytes, want 32"},
		{name: "carriage return", out: strings.TrimSuffix(line, "\n") + "\r\n", wantErr: "not in canonical"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewKeyLineReader(io.NopCloser(strings.NewReader(tt.out)))
			if _, err := r.Key(); !errors.Is(err, errNotAnnounced) {
				t.Fatalf("Key before the first Read: %v, want %v", err, errNotAnnounced)
			}
			rest, err := io.ReadAll(r)
			got, kerr := r.Key()
			if tt.wantErr != "" {
				if err == nil || kerr == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(kerr.Error(), tt.wantErr) {
					t.Fatalf("Read error %v, Key error %v; want one containing %q", err, kerr, tt.wantErr)
				}
				if len(rest) != 0 {
					t.Fatalf("passed %q through after a refused key line", rest)
				}
				return
			}
			if err != nil || kerr != nil || !got.Equal(key) {
				t.Fatalf("Read error %v, Key %x, %v; want %x", err, got, kerr, key)
			}
			if want := strings.TrimPrefix(tt.out, line); string(rest) != want {
				t.Fatalf("passed through %q, want %q", rest, want)
			}
		})
	}
}

// FuzzKeyLineReader feeds arbitrary sidecar output: a key is taken only
// from a first line that is exactly ServerKeyLine of it, and then
// everything after that line, and only that, is passed through.
func FuzzKeyLineReader(f *testing.F) {
	id, err := NewIdentity()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(ServerKeyLine(id.PublicKey) + "1|1|unix|/s|grpc||\n"))
	f.Add([]byte("1|1|unix|/s|grpc||\n"))
	f.Add([]byte(ServerKeyLinePrefix + "\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, out []byte) {
		r := NewKeyLineReader(io.NopCloser(bytes.NewReader(out)))
		rest, rerr := io.ReadAll(r)
		key, kerr := r.Key()
		if (rerr == nil) != (kerr == nil) {
			t.Fatalf("Read error %v but Key error %v", rerr, kerr)
		}
		if kerr != nil {
			if len(rest) != 0 {
				t.Fatalf("passed %d bytes through after a refused key line", len(rest))
			}
			return
		}
		line := ServerKeyLine(key)
		if !bytes.HasPrefix(out, []byte(line)) || !bytes.Equal(rest, out[len(line):]) {
			t.Fatalf("key %x taken from %q, passed through %q", key, out, rest)
		}
	})
}

// TestKeyLineReaderNeverWaits checks that Key answers at once while Read
// still waits for a sidecar that has written nothing: the supervisor asks
// it after go-plugin's start timeout, with the reader still blocked.
func TestKeyLineReaderNeverWaits(t *testing.T) {
	pr, pw := io.Pipe()
	r := NewKeyLineReader(pr)
	read := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(r)
		read <- err
	}()
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		if _, err := r.Key(); !errors.Is(err, errNotAnnounced) {
			t.Errorf("Key before any output: %v, want %v", err, errNotAnnounced)
		}
	}()
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("Key waited for the sidecar's output")
	}
	pw.Close()
	err := <-read
	if _, kerr := r.Key(); !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(kerr, io.ErrUnexpectedEOF) {
		t.Fatalf("output ended before the key line: Read %v, Key %v; want %v", err, kerr, io.ErrUnexpectedEOF)
	}
}
