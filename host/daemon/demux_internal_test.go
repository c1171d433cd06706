package daemon

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Start is what an HTTP/2 client with prior knowledge sends first: the
// preface, its SETTINGS, the acknowledgement of the server's SETTINGS when
// ackFirst (otherwise after the request) and one request with contentType.
func h2Start(t *testing.T, contentType string, ackFirst bool) (sent, want []byte) {
	t.Helper()
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range []hpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"}, {Name: ":path", Value: "/x"}, {Name: ":authority", Value: "a"}, {Name: "content-type", Value: contentType}} {
		enc.WriteField(f)
	}
	var pre, ack, req bytes.Buffer
	pre.WriteString(http2.ClientPreface)
	http2.NewFramer(&pre, nil).WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
	http2.NewFramer(&ack, nil).WriteSettingsAck()
	http2.NewFramer(&req, nil).WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true})
	http2.NewFramer(&req, nil).WritePing(false, [8]byte{1})
	if ackFirst {
		sent = bytes.Join([][]byte{pre.Bytes(), ack.Bytes(), req.Bytes()}, nil)
	} else {
		sent = bytes.Join([][]byte{pre.Bytes(), req.Bytes(), ack.Bytes()}, nil)
	}
	return sent, bytes.Join([][]byte{pre.Bytes(), req.Bytes()}, nil)
}

// TestSniffGRPC sends a connection's first bytes over loopback TCP and
// checks the demultiplexer's verdict and what it replays: gRPC only for an
// HTTP/2 request with content-type application/grpc, every byte replayed
// in order but the acknowledgement of the sniffer's SETTINGS (before or
// after the request), and an HTTP/1.1 request shorter than the preface
// decided at once (the sniff timeout is an hour; waiting for it would hang
// the test).
func TestSniffGRPC(t *testing.T) {
	grpcAck, grpcWant := h2Start(t, "application/grpc", true)
	grpcLate, grpcLateWant := h2Start(t, "application/grpc+proto", false)
	jsonAck, jsonWant := h2Start(t, "application/json", true)
	short := []byte("GET / HTTP/1.1\r\n\r\n")
	cases := []struct {
		name     string
		sent     []byte
		grpc     bool
		want     []byte
		settings bool // the sniffer answered with SETTINGS
	}{
		{"grpc ack first", grpcAck, true, grpcWant, true},
		{"grpc ack after the request", grpcLate, true, grpcLateWant, true},
		{"h2c JSON", jsonAck, false, jsonWant, true},
		{"HTTP/1.1 shorter than the preface", short, false, short, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			cli, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			srv, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			if _, err := cli.Write(tc.sent); err != nil {
				t.Fatal(err)
			}
			conn, grpc := sniffGRPC(srv, time.Hour)
			if grpc != tc.grpc {
				t.Fatalf("grpc = %v, want %v", grpc, tc.grpc)
			}
			got := make([]byte, len(tc.want))
			if _, err := io.ReadFull(conn, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("replayed %q\nwant     %q", got, tc.want)
			}
			// The sniffer dropped exactly one acknowledgement: a
			// second one goes through.
			var ack bytes.Buffer
			http2.NewFramer(&ack, nil).WriteSettingsAck()
			cli.Write(ack.Bytes())
			next := make([]byte, ack.Len())
			if _, err := io.ReadFull(conn, next); err != nil || !bytes.Equal(next, ack.Bytes()) {
				t.Fatalf("after the replay: %q %v", next, err)
			}
			cli.SetReadDeadline(time.Now().Add(time.Second))
			answer := make([]byte, len(emptySettings))
			_, err = io.ReadFull(cli, answer)
			if tc.settings && (err != nil || !bytes.Equal(answer, emptySettings)) {
				t.Fatalf("client read %q %v, want the sniffer's SETTINGS", answer, err)
			}
			if !tc.settings && err == nil {
				t.Fatalf("client read %q, want nothing", answer)
			}
		})
	}
}
