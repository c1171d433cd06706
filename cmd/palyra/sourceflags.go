package main

import (
	"crypto/x509"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/internal/cliconfig"
	"github.com/palyra-go/palyra/host/source"
)

// maxCACertBytes bounds a --registry-ca-cert file.
const maxCACertBytes = 1 << 20

// sourceFlags are the registry options of the verbs that fetch from a
// source on the local host (a daemon fetches with its own configuration).
type sourceFlags struct {
	// caCert is --registry-ca-cert: a PEM file of CAs trusted for registry
	// TLS servers, besides the system's.
	caCert string
	// plainHTTP is --plain-http: speak HTTP to OCI registries on loopback.
	plainHTTP bool
}

// register adds --registry-ca-cert and --plain-http to c.
func (s *sourceFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&s.caCert, "registry-ca-cert", "", "PEM file of CA certificates trusted for registry TLS servers, besides the system's")
	c.Flags().BoolVar(&s.plainHTTP, "plain-http", false, "speak plain HTTP to OCI registries on a loopback address (refused for any other)")
}

// config is the source.Config of the flags over the environment's
// (cliconfig.Sources: the docker credential file, $PALYRA_OCI_PLAIN_HTTP);
// the host fills in its trust store and logger.
func (s *sourceFlags) config() (source.Config, error) {
	cfg := cliconfig.Sources()
	cfg.PlainHTTP = cfg.PlainHTTP || s.plainHTTP
	if s.caCert == "" {
		return cfg, nil
	}
	pem, err := readSmallFile(s.caCert, maxCACertBytes)
	if err != nil {
		return cfg, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return cfg, fmt.Errorf("%w: --registry-ca-cert %s holds no PEM certificate", errUsage, s.caCert)
	}
	cfg.RootCAs = pool
	return cfg, nil
}
