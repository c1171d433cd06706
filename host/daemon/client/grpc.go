package client

import (
	"strings"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/palyra-go/palyra/host/daemon"
)

// FromGRPC returns the *Error of a failed call of the daemon's gRPC
// HostService, so errors.Is and errcode.Of answer for it as they do for the
// same failure over HTTP (or a local one). trailer is the call's trailer
// (grpc.Trailer): the daemon puts the error's code in its
// daemon.TrailerErrorCode key, and at the head of the status message (the
// readable sentence, the Error's Message); the whole chain, when it says
// more, is in daemon.TrailerErrorDetail (the Error's Detail). Its Status is
// the HTTP status the API gives that code.
//
// An error without that trailer (nil, a transport failure, a status the
// daemon did not answer) is returned as it is.
func FromGRPC(err error, trailer metadata.MD) error {
	codes := trailer.Get(daemon.TrailerErrorCode)
	if err == nil || len(codes) != 1 || codes[0] == "" {
		return err
	}
	code := codes[0]
	msg := err.Error()
	if s, ok := status.FromError(err); ok {
		msg = strings.TrimPrefix(s.Message(), code+": ")
	}
	var detail string
	if d := trailer.Get(daemon.TrailerErrorDetail); len(d) == 1 {
		detail = d[0]
	}
	return &Error{Status: daemon.HTTPStatus(code), ErrorCode: code, Message: msg, Detail: detail}
}
