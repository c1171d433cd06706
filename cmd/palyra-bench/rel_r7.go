package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/palyra-go/palyra/host/artifact"
	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/supervisor"
	"github.com/palyra-go/palyra/host/vault"
	"github.com/palyra-go/palyra/sdk/examples/examplebuild"
)

// r7Secret is the value R7 stores and then searches for.
const r7Secret = "r7-Zq8vX3kP0wLm5sT2yB9n"

// syncBuffer is a bytes.Buffer safe for concurrent writers (the logger).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// relSecretLeak is R7: the http-fetch example calls a local server with a
// secret the host injects (an in-process palyra-host daemon: HTTP API,
// trace-level JSON logs, metrics, events), then the secret's value (plain,
// base64, hex) is searched for in every output: the logs, every API
// response, the event journal, the metrics, every file of the state dir.
// The server must have received it (else the search proves nothing).
func relSecretLeak(ctx context.Context, e *env) ([]relRow, error) {
	var serverSaw atomic.Int64
	srvLn, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Authorization"), r7Secret) {
			serverSaw.Add(1)
		}
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "upstream trouble", http.StatusInternalServerError)
		case "/redirect":
			http.Redirect(w, r, "http://localhost:1/elsewhere", http.StatusFound)
		default:
			fmt.Fprint(w, `{"items":[]}`)
		}
	}), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(srvLn) }()
	defer func() { srv.Close(); <-served }()
	port := srvLn.Addr().(*net.TCPAddr).Port

	state := filepath.Join(e.work, "r7-state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, err
	}
	policyPath := filepath.Join(e.work, "r7-policy.toml")
	if err := os.WriteFile(policyPath, []byte(fmt.Sprintf(`[http]
allowed_schemes = ["http", "https"]
allowed_ports = [%d, 443]
allowed_private_networks = ["127.0.0.1/32"]
max_redirects = 3
`, port)), 0o600); err != nil {
		return nil, err
	}
	sock, err := os.MkdirTemp("", "pb")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(sock)
	logs := &syncBuffer{}
	d, err := daemon.Open(ctx, daemon.Options{
		StateDir: state, SidecarPath: e.sidecar, PolicyPath: policyPath,
		VaultKey:   base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)),
		Logger:     hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Trace, JSONFormat: true}),
		Config:     &daemon.Config{Listen: "127.0.0.1:0", ReauditInterval: &daemon.Duration{}},
		Supervisor: supervisor.Config{IdleTimeout: -1, SocketDir: sock},
	})
	if err != nil {
		return nil, err
	}
	ln, err := d.Listen()
	if err != nil {
		d.Close(ctx)
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	servedD := make(chan error, 1)
	go func() { servedD <- d.Serve(sctx, ln) }()
	stopped := false
	stopDaemon := func() {
		if !stopped {
			stopped = true
			stop()
			<-servedD
		}
	}
	defer stopDaemon()
	token, err := daemon.ReadToken(daemon.TokenPath(d.StateDir()))
	if err != nil {
		return nil, err
	}
	p := &daemonProc{url: d.URL(ln), token: token}
	defer http.DefaultClient.CloseIdleConnections()

	name, err := vault.ParseName("skill:palyra.http_fetch/api_token")
	if err != nil {
		return nil, err
	}
	if err := d.Host().Vault().Set(ctx, name, []byte(r7Secret)); err != nil {
		return nil, err
	}
	art, err := e.fetchArtifact()
	if err != nil {
		return nil, err
	}
	var outputs []r7Output
	add := func(what string, b []byte) { outputs = append(outputs, r7Output{what, b}) }
	st, b, err := p.do(ctx, http.MethodPost, "/v1/skills?allow_tofu=true", art)
	if err != nil || st != http.StatusCreated {
		return nil, fmt.Errorf("install http-fetch: %d %s %v", st, b, err)
	}
	add("API: install", b)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for _, in := range []string{
		`{"url":%q,"use_token":true}`, `{"url":%q}`,
	} {
		for _, path := range []string{"/v1/items", "/fail", "/redirect"} {
			body := map[string]json.RawMessage{"input": json.RawMessage(fmt.Sprintf(in, base+path))}
			b, err := approvedFetch(ctx, p, body)
			if err != nil {
				return nil, err
			}
			add("API: call "+path, b)
		}
	}
	// A host outside the grant: refused by the broker.
	b, err = approvedFetch(ctx, p, map[string]json.RawMessage{"input": json.RawMessage(`{"url":"http://evil.example.net/","use_token":true}`)})
	if err != nil {
		return nil, err
	}
	add("API: call outside the grant", b)
	for _, path := range []string{"/v1/skills", "/v1/skills/palyra.http_fetch", "/v1/skills/palyra.http_fetch/metrics",
		"/v1/tools", "/v1/sidecars", "/metrics", "/v1/events?after=0&follow=false"} {
		_, b, err := p.do(ctx, http.MethodGet, path, nil)
		if err != nil {
			return nil, err
		}
		add("API: GET "+path, b)
	}
	stopDaemon()
	if err := d.Close(ctx); err != nil {
		return nil, err
	}
	add("logs (trace, JSON)", logs.Bytes())
	files := 0
	err = filepath.WalkDir(state, func(path string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(state, path)
		add("state dir: "+rel, b)
		return nil
	})
	if err != nil {
		return nil, err
	}

	forms := [][]byte{[]byte(r7Secret), []byte(base64.StdEncoding.EncodeToString([]byte(r7Secret))),
		[]byte(base64.RawURLEncoding.EncodeToString([]byte(r7Secret))), []byte(hex.EncodeToString([]byte(r7Secret)))}
	row := relRow{Scenario: "R7", Title: "a secret's value searched in every output (daemon, http-fetch example)"}
	total, size := 0, 0
	for _, o := range outputs {
		n := 0
		for _, f := range forms {
			n += bytes.Count(o.data, f)
		}
		total += n
		size += len(o.data)
		row.check(n == 0, "%s: %d occurrences", o.what, n)
	}
	row.check(serverSaw.Load() > 0, "the server never received the injected secret")
	row.Figures = append(row.Figures,
		fmt.Sprintf("occurrences: %d (must be 0) in %d outputs, %d bytes: logs, %d API responses (calls, skills, metrics, tools, sidecars, /metrics, events), %d state-dir files",
			total, len(outputs), size, len(outputs)-1-files, files),
		fmt.Sprintf("forms searched: plain, base64, base64url, hex; requests that carried it to the server: %d", serverSaw.Load()))
	return []relRow{row}, nil
}

// r7Output is one output R7 searches.
type r7Output struct {
	what string
	data []byte
}

// fetchArtifact signs the http-fetch example with its grant pointed at
// 127.0.0.1 (the local server R7 runs).
// approvedFetch calls the http-fetch example's tool, which is
// default_sensitive: the daemon answers 202 with a pending approval, which
// this approves as the operator before calling again with it. It returns
// the last answer's body (each answer is searched for the secret too).
func approvedFetch(ctx context.Context, p *daemonProc, body map[string]json.RawMessage) ([]byte, error) {
	const path = "/v1/skills/palyra.http_fetch/tools/palyra.http_fetch/call"
	code, b, err := p.do(ctx, http.MethodPost, path, body)
	if err != nil || code != http.StatusAccepted {
		return b, err
	}
	var pending struct {
		Pending struct {
			ID string `json:"id"`
		} `json:"pending"`
	}
	if err := json.Unmarshal(b, &pending); err != nil || pending.Pending.ID == "" {
		return nil, fmt.Errorf("R7: a 202 without a pending approval: %s", b)
	}
	if _, _, err := p.do(ctx, http.MethodPost, "/v1/approvals/"+pending.Pending.ID+"/approve", map[string]string{"reason": "R7"}); err != nil {
		return nil, err
	}
	body["approval_id"] = json.RawMessage(fmt.Sprintf("%q", pending.Pending.ID))
	_, b2, err := p.do(ctx, http.MethodPost, path, body)
	return append(b, b2...), err
}

func (e *env) fetchArtifact() ([]byte, error) {
	dir, err := examplebuild.Dir("http-fetch")
	if err != nil {
		return nil, err
	}
	m, err := os.ReadFile(filepath.Join(dir, "skill.toml"))
	if err != nil {
		return nil, err
	}
	m = bytes.Replace(m, []byte(`http_egress_allowlist = ["api.example.com"]`), []byte(`http_egress_allowlist = ["127.0.0.1"]`), 1)
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	sbom, err := read("sbom.cdx.json")
	if err != nil {
		return nil, err
	}
	prov, err := read("provenance.json")
	if err != nil {
		return nil, err
	}
	b, err := artifact.Build(artifact.BuildInput{
		Manifest: m, Modules: []artifact.File{{Path: "http-fetch.wasm", Data: e.fetchWasm}},
		SBOM: sbom, Provenance: prov, SigningKey: e.key, SignedAt: signedAt,
	})
	if err != nil {
		return nil, err
	}
	return b.Bytes, nil
}
