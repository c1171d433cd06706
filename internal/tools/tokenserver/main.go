// Command tokenserver is the quickstart's stand-in for an API that needs a
// bearer token: it listens on 127.0.0.1 (a free port, written to
// --port-file), answers GET / with 200 and {"authorized":true} when the
// request carries "Authorization: Bearer <token>" (the token is read from
// --token-file, never from argv), and 401 otherwise. It runs until killed.
package main

import (
	"bytes"
	"crypto/subtle"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
)

func main() {
	tokenFile := flag.String("token-file", "", "file holding the expected token")
	portFile := flag.String("port-file", "", "file the listening port is written to")
	flag.Parse()
	token, err := os.ReadFile(*tokenFile)
	if err != nil || *portFile == "" {
		fmt.Fprintln(os.Stderr, "usage: tokenserver --token-file FILE --port-file FILE")
		os.Exit(2)
	}
	want := []byte("Bearer " + string(bytes.TrimSpace(token)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(*portFile, []byte(strconv.Itoa(port)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintln(w, `{"authorized":false}`)
			return
		}
		fmt.Fprintln(w, `{"authorized":true}`)
	}))
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
