package ociregistry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/palyra-go/palyra/internal/testtls"

	"golang.org/x/crypto/bcrypt"

	"github.com/palyra-go/palyra/internal/proctest"
)

// Binary is the registry executable Debian's docker-registry package installs.
const Binary = "/usr/bin/docker-registry"

// Options configure a registry.
type Options struct {
	// Username and Password, when Username is set, turn on htpasswd basic
	// auth with that one account.
	Username, Password string
	// TLS serves HTTPS with a certificate for 127.0.0.1 signed by a CA made
	// for this registry (Registry.CAPEM, Registry.CAPool).
	TLS bool
}

// Registry is a running registry process.
type Registry struct {
	// Host is 127.0.0.1:PORT, the registry part of an oci:// reference.
	Host string
	// CAPEM is the PEM certificate of the CA that signed the server's
	// certificate, CAPool a pool holding it (both nil without TLS).
	CAPEM  []byte
	CAPool *x509.CertPool

	dir    string
	cmd    *exec.Cmd
	done   chan struct{}
	output *proctest.Buffer
}

// Start runs a registry for tb and registers its Close as a cleanup. It
// fails tb when the binary is missing or the registry does not answer.
func Start(tb testing.TB, opts Options) *Registry {
	tb.Helper()
	if _, err := os.Stat(Binary); err != nil {
		tb.Fatalf("ociregistry: %s not found (%v): install Debian's docker-registry package (apt-get install docker-registry); the CI installs it", Binary, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := StartContext(ctx, opts)
	if err != nil {
		tb.Fatalf("ociregistry: %v", err)
	}
	tb.Cleanup(r.Close)
	return r
}

// StartContext runs a registry and waits until it answers or ctx ends. On
// error nothing is left running or on disk.
func StartContext(ctx context.Context, opts Options) (r *Registry, err error) {
	dir, err := os.MkdirTemp("", "ociregistry-")
	if err != nil {
		return nil, err
	}
	r = &Registry{dir: dir}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	r.Host = fmt.Sprintf("127.0.0.1:%d", port)
	cfg := map[string]any{
		"version": 0.1,
		"log":     map[string]any{"level": "warn", "accesslog": map[string]any{"disabled": true}},
		"storage": map[string]any{
			"filesystem": map[string]any{"rootdirectory": filepath.Join(dir, "data")},
			"delete":     map[string]any{"enabled": true},
		},
		"http": map[string]any{"addr": r.Host, "secret": "ociregistry-test-secret"},
	}
	httpCfg := cfg["http"].(map[string]any)
	if opts.TLS {
		certFile, keyFile, err := r.makeTLS(dir)
		if err != nil {
			return nil, err
		}
		httpCfg["tls"] = map[string]any{"certificate": certFile, "key": keyFile}
	}
	if opts.Username != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(opts.Password), bcrypt.MinCost)
		if err != nil {
			return nil, err
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(opts.Username+":"+string(hash)+"\n"), 0o600); err != nil {
			return nil, err
		}
		cfg["auth"] = map[string]any{"htpasswd": map[string]any{"realm": "ociregistry", "path": htpasswd}}
	}
	// YAML is a superset of JSON: the config is written as JSON.
	conf, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	confFile := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(confFile, conf, 0o600); err != nil {
		return nil, err
	}
	r.output = &proctest.Buffer{}
	cmd := exec.Command(Binary, "serve", confFile)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	cmd.Stdout, cmd.Stderr = r.output, r.output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w (install Debian's docker-registry package)", Binary, err)
	}
	r.cmd = cmd
	r.done = make(chan struct{})
	go func() { cmd.Wait(); close(r.done) }()
	if err := r.waitReady(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// waitReady polls GET /v2/ until it answers (200, or 401 with auth).
func (r *Registry) waitReady(ctx context.Context) error {
	client := r.Client()
	defer client.CloseIdleConnections()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL()+"/v2/", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				return nil
			}
		}
		select {
		case <-r.done:
			return fmt.Errorf("registry exited before answering: %s", r.output.String())
		case <-ctx.Done():
			return fmt.Errorf("registry did not answer GET /v2/ on %s: %w; output: %s", r.Host, ctx.Err(), r.output.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// URL is the registry's base URL (http:// or https://).
func (r *Registry) URL() string {
	if r.CAPool != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// Client is an HTTP client that trusts the registry's CA.
func (r *Registry) Client() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if r.CAPool != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: r.CAPool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// Output is what the registry process wrote.
func (r *Registry) Output() string {
	if r.output == nil {
		return ""
	}
	return r.output.String()
}

// Close kills the registry, waits for it and removes its directory.
func (r *Registry) Close() {
	if r.cmd != nil && r.cmd.Process != nil {
		syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
		r.cmd = nil
	}
	if r.dir != "" {
		os.RemoveAll(r.dir)
		r.dir = ""
	}
}

// WriteDockerConfig writes a docker config.json in dir giving user and
// password for this registry, and returns its path.
func (r *Registry) WriteDockerConfig(dir, user, password string) (string, error) {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	b, err := json.Marshal(map[string]any{"auths": map[string]any{r.Host: map[string]string{"auth": auth}}})
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "config.json")
	return p, os.WriteFile(p, b, 0o600)
}

func (r *Registry) makeTLS(dir string) (certFile, keyFile string, err error) {
	ca, err := testtls.GenerateCA()
	if err != nil {
		return "", "", err
	}
	if certFile, keyFile, err = ca.WriteLeaf(dir); err != nil {
		return "", "", err
	}
	r.CAPEM, r.CAPool = ca.PEM, ca.Pool()
	return certFile, keyFile, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// BlobPath is where the registry's filesystem storage keeps the blob (or
// manifest) of digest sha256:HEX, for tests that corrupt storage.
func (r *Registry) BlobPath(digest string) string {
	hex := strings.TrimPrefix(digest, "sha256:")
	if len(hex) < 2 {
		return ""
	}
	return filepath.Join(r.dir, "data", "docker", "registry", "v2", "blobs", "sha256", hex[:2], hex, "data")
}
