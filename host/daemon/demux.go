package daemon

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// The plaintext port's connection demultiplexer. grpc.Server.ServeHTTP
// (gRPC as an http.Handler under net/http's HTTP/2 server) costs about a
// third more per call than grpc.Server.Serve's own transport: more
// goroutine hand-offs and copies per call. So on a plaintext listener each
// connection that opens with the HTTP/2 preface and whose first request is
// gRPC (content-type application/grpc) goes to the gRPC server's own
// transport; every other connection (HTTP/1.1, h2c JSON requests) goes to
// the http.Server as before. TLS listeners keep the ServeHTTP path (ALPN
// h2 is shared with browsers and the handshake belongs to net/http).
//
// To see the first request's headers the demultiplexer must answer the
// client's preface with a SETTINGS frame (gRPC clients wait for it before
// they send a request); the server that gets the connection sends its own,
// so the demultiplexer drops the client's first SETTINGS acknowledgement
// (the one for its frame) and the server sees a well-formed conversation.

const (
	// sniffFrames bounds the frames read before the first HEADERS.
	sniffFrames = 64
	// sniffBytes bounds the bytes read before the first HEADERS.
	sniffBytes = 1 << 20
)

// emptySettings is an HTTP/2 SETTINGS frame with no parameters.
var emptySettings = []byte{0, 0, 0, byte(http2.FrameSettings), 0, 0, 0, 0, 0}

// demux splits a plaintext listener's connections between the gRPC
// server's transport (grpc) and the http.Server (http).
type demux struct {
	ln      net.Listener
	timeout time.Duration
	http    *chanListener
	grpc    *chanListener
	wg      sync.WaitGroup
}

// sniffTimeout bounds how long the demultiplexer waits for a connection's
// first request; a connection still silent then goes to the http.Server.
const sniffTimeout = 10 * time.Second

func newDemux(ln net.Listener, timeout time.Duration) *demux {
	ctx, cancel := context.WithCancel(context.Background())
	closeAll := func() { cancel(); ln.Close() }
	return &demux{
		ln: ln, timeout: timeout,
		http: &chanListener{addr: ln.Addr(), conns: make(chan net.Conn), ctx: ctx, close: closeAll},
		grpc: &chanListener{addr: ln.Addr(), conns: make(chan net.Conn), ctx: ctx, close: closeAll},
	}
}

// run accepts until the listener closes, then waits for the connections
// being sniffed and returns the accept error.
func (m *demux) run() error {
	defer m.wg.Wait()
	for {
		c, err := m.ln.Accept()
		if err != nil {
			m.http.close()
			return err
		}
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			// A shutdown ends the sniff: closing c ends its read.
			stop := context.AfterFunc(m.http.ctx, func() { c.Close() })
			conn, grpc := sniffGRPC(c, m.timeout)
			if !stop() {
				return
			}
			to := m.http
			if grpc {
				to = m.grpc
			}
			select {
			case to.conns <- conn:
			case <-to.ctx.Done():
				conn.Close()
			}
		}()
	}
}

// sniffGRPC reads the start of c: it reports whether c is HTTP/2 with prior
// knowledge and its first request is gRPC, and returns a connection that
// replays what it read (without the client's acknowledgement of the
// demultiplexer's SETTINGS frame).
func sniffGRPC(c net.Conn, timeout time.Duration) (net.Conn, bool) {
	c.SetReadDeadline(time.Now().Add(timeout))
	defer c.SetReadDeadline(time.Time{})
	var rec bytes.Buffer
	preface := []byte(http2.ClientPreface)
	buf := make([]byte, len(preface))
	for rec.Len() < len(preface) {
		n, err := c.Read(buf[:len(preface)-rec.Len()])
		rec.Write(buf[:n])
		if !bytes.HasPrefix(preface, rec.Bytes()) || err != nil {
			return &replayConn{Conn: c, r: io.MultiReader(&rec, c)}, false
		}
	}
	if _, err := c.Write(emptySettings); err != nil {
		return &replayConn{Conn: c, r: io.MultiReader(&rec, c)}, false
	}
	fr := http2.NewFramer(io.Discard, &limitedTee{r: c, w: &rec, n: sniffBytes})
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	fr.MaxHeaderListSize = 64 << 10
	acked, grpc := false, false
	for i := 0; i < sniffFrames; i++ {
		mark := rec.Len()
		f, err := fr.ReadFrame()
		if err != nil {
			break
		}
		if s, ok := f.(*http2.SettingsFrame); ok && s.IsAck() && !acked {
			rec.Truncate(mark)
			acked = true
			continue
		}
		if h, ok := f.(*http2.MetaHeadersFrame); ok {
			for _, hf := range h.RegularFields() {
				if hf.Name == "content-type" {
					grpc = strings.HasPrefix(hf.Value, "application/grpc")
				}
			}
			break
		}
	}
	var rest io.Reader = c
	if !acked {
		rest = &ackFilter{r: c}
	}
	return &replayConn{Conn: c, r: io.MultiReader(&rec, rest)}, grpc
}

// limitedTee reads from r, copies what it read to w, and fails once more
// than n bytes were read.
type limitedTee struct {
	r io.Reader
	w io.Writer
	n int
}

var errSniffLimit = errors.New("daemon: connection sniff limit")

func (t *limitedTee) Read(p []byte) (int, error) {
	if t.n <= 0 {
		return 0, errSniffLimit
	}
	if len(p) > t.n {
		p = p[:t.n]
	}
	n, err := t.r.Read(p)
	t.n -= n
	t.w.Write(p[:n])
	return n, err
}

// ackFilter passes HTTP/2 frames through but drops the first SETTINGS
// acknowledgement.
type ackFilter struct {
	r       io.Reader
	pending []byte
	done    bool
}

func (f *ackFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.done {
			return f.r.Read(p)
		}
		var hdr [9]byte
		if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
			return 0, err
		}
		length := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		frame := make([]byte, 9+length)
		copy(frame, hdr[:])
		if _, err := io.ReadFull(f.r, frame[9:]); err != nil {
			return 0, err
		}
		if http2.FrameType(hdr[3]) == http2.FrameSettings && http2.Flags(hdr[4]).Has(http2.FlagSettingsAck) {
			f.done = true
			continue
		}
		f.pending = frame
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// replayConn is a connection whose reads come from r.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// chanListener is a net.Listener fed by the demultiplexer. Closing either
// of a demux's listeners closes both and the listener under them.
type chanListener struct {
	addr  net.Addr
	conns chan net.Conn
	ctx   context.Context // ends when the listeners close
	close func()
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.ctx.Done():
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error { l.close(); return nil }

func (l *chanListener) Addr() net.Addr { return l.addr }
