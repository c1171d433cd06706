package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"golang.org/x/crypto/bcrypt"
)

// runServer starts a standalone nats-server from a configuration file
// with the text conf, the way an operator runs a NATS deployment, and
// stops it when the test ends.
func runServer(t testing.TB, conf string) *server.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	opts.NoSigs = true
	return startServer(t, opts)
}

func startServer(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		s.WaitForShutdown()
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	return s
}

// confPath quotes a path for a nats-server configuration file.
func confPath(p string) string { return fmt.Sprintf("%q", p) }

// TestDialTLSClientCertificates: a node's link to a NATS deployment that
// requires client certificates connects with a certificate from the
// deployment's CA, and is refused (cluster_unavailable, naming the server
// and the TLS failure) without one, with one from another CA, or when it
// does not trust the server's CA.
func TestDialTLSClientCertificates(t *testing.T) {
	ca, other := newTestCA(t, "palyra-test-ca"), newTestCA(t, "other-ca")
	srvTLS := ca.issue(t, "server")
	s := runServer(t, fmt.Sprintf(`
listen: "127.0.0.1:-1"
jetstream { store_dir: %s }
tls {
  cert_file: %s
  key_file: %s
  ca_file: %s
  verify: true
  timeout: 2
}
`, confPath(t.TempDir()), confPath(srvTLS.CertFile), confPath(srvTLS.KeyFile), confPath(ca.CAFile)))
	addr := s.Addr().String()
	good, foreign := ca.issue(t, "node-a"), other.issue(t, "node-b")
	tests := []struct {
		name    string
		tls     TLSConfig
		wantErr string // "" is a successful Dial
	}{
		// A Go TLS client sends no certificate the server's acceptable CAs
		// do not cover: a foreign certificate is a missing one. The
		// refusal reads "remote error: tls: certificate required" or, when
		// the client writes first, "tls error: connection closed by
		// remote after TLS handshake".
		{"certificate from the CA", good, ""},
		{"no client certificate", TLSConfig{CAFile: ca.CAFile}, "tls"},
		{"certificate from another CA", TLSConfig{CAFile: ca.CAFile, CertFile: foreign.CertFile, KeyFile: foreign.KeyFile}, "tls"},
		{"server's CA not trusted", TLSConfig{CAFile: other.CAFile, CertFile: good.CertFile, KeyFile: good.KeyFile}, "certificate signed by unknown authority"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l, err := Dial(ctx, Config{NodeName: "a", URLs: []string{"tls://" + addr}, TLS: tc.tls, ConnectTimeout: 5 * time.Second})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				if _, err := l.JetStream().Publish(ctx, OpsSubjectPrefix+"test", []byte("x")); err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				l.Close()
				t.Fatal("Dial succeeded")
			}
			if !errors.Is(err, ErrClusterUnavailable) {
				t.Fatalf("error %v: want cluster_unavailable", err)
			}
			if msg := err.Error(); !strings.Contains(msg, addr) || !strings.Contains(msg, tc.wantErr) {
				t.Fatalf("error %q: want it to name the server %s and the TLS failure %q", msg, addr, tc.wantErr)
			}
		})
	}
}

// recipeServerConfig is the nats-server configuration file of the
// production recipe (docs/cluster-production.md): the nodes' user in
// account PALYRA (with JetStream), and another account on the same
// servers. OTHER has JetStream too, so that the test can see its
// messages land in its own streams.
const recipeServerConfig = `
accounts {
  PALYRA {
    jetstream: enabled
    users: [ { user: palyra, password: %q } ]
  }
  OTHER {
    jetstream: enabled
    users: [ { user: other, password: %q } ]
  }
}
`

// recipeCluster starts the production recipe's 3 embedded nodes on
// loopback: TLS with client certificates on client and route listeners,
// the route token, the server configuration file with the accounts, the
// nodes' user in PALYRA.
func recipeCluster(t *testing.T, ca *testCA) []*Link {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "nats-accounts.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, recipeServerConfig, "palyra-secret", "other-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgs := embeddedConfigs(t, 3)
	links := make([]*Link, len(cfgs))
	errs := make([]error, len(cfgs))
	done := make(chan int)
	for i := range cfgs {
		c := cfgs[i]
		c.TLS = ca.issue(t, c.NodeName)
		c.User, c.Password = "palyra", "palyra-secret"
		c.Embedded.Token = "route-token"
		c.Embedded.ConfigFile = conf
		go func() {
			links[i], errs[i] = Dial(context.Background(), c)
			done <- i
		}()
	}
	for range cfgs {
		<-done
	}
	for i, l := range links {
		if l != nil {
			t.Cleanup(func() { l.Close() })
		}
		if errs[i] != nil {
			t.Fatalf("node %d: %v", i, errs[i])
		}
	}
	return links
}

// TestProductionRecipe runs the recipe's cluster and proves what the
// recipe claims: routes and clients are TLS with client certificates;
// clients without a certificate, without a user, or with only the route
// token are refused; and a client of another account on the same servers,
// with a valid certificate, publishing on every palyra subject, reaches
// neither the PALYRA account's streams nor its subscribers.
func TestProductionRecipe(t *testing.T) {
	ctx := context.Background()
	ca := newTestCA(t, "palyra-test-ca")
	links := recipeCluster(t, ca)
	if got := links[0].Config().Replicas; got != 3 {
		t.Fatalf("replicas %d, want 3", got)
	}
	for i, l := range links {
		v, err := l.Server().Varz(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !v.TLSRequired || !v.TLSVerify || !v.Cluster.TLSRequired || !v.Cluster.TLSVerify || l.Server().NumRoutes() == 0 {
			t.Fatalf("node %d: client TLS required %v verify %v, route TLS required %v verify %v, routes %d",
				i, v.TLSRequired, v.TLSVerify, v.Cluster.TLSRequired, v.Cluster.TLSVerify, l.Server().NumRoutes())
		}
	}
	// One op of the cluster's own, so that "unchanged" is not "empty".
	if _, err := links[0].JetStream().Publish(ctx, OpsSubjectPrefix+"install", []byte("from the cluster")); err != nil {
		t.Fatal(err)
	}
	before, err := links[0].Ops().Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before.Cluster == nil || len(before.Cluster.Replicas) != 2 {
		t.Fatalf("%s cluster %+v, want a leader and 2 replicas", OpsStream, before.Cluster)
	}

	url := links[2].ClientURL()
	clientCert := ca.issue(t, "client")
	certOpt := nats.ClientCert(clientCert.CertFile, clientCert.KeyFile)
	caOpt := nats.RootCAs(ca.CAFile)
	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			opts []nats.Option
			want string
		}{
			{"no client certificate", []nats.Option{caOpt, nats.UserInfo("palyra", "palyra-secret")}, "tls"},
			{"no user", []nats.Option{caOpt, certOpt}, "authorization violation"},
			{"the route token", []nats.Option{caOpt, certOpt, nats.Token("route-token")}, "authorization violation"},
			{"wrong password", []nats.Option{caOpt, certOpt, nats.UserInfo("palyra", "guess")}, "authorization violation"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				nc, err := nats.Connect(url, tc.opts...)
				if err == nil {
					nc.Close()
					t.Fatal("connected")
				}
				if !strings.Contains(strings.ToLower(err.Error()), tc.want) {
					t.Fatalf("error %q, want %q", err, tc.want)
				}
			})
		}
	})

	connect := func(user, password string) *nats.Conn {
		t.Helper()
		nc, err := nats.Connect(url, caOpt, certOpt, nats.UserInfo(user, password))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	observer, other, marker := connect("palyra", "palyra-secret"), connect("other", "other-secret"), connect("palyra", "palyra-secret")
	seen, err := observer.SubscribeSync("palyra.>")
	if err != nil {
		t.Fatal(err)
	}
	// A node serving skill echo, as the routing part's micro endpoints do.
	served, err := observer.QueueSubscribeSync(CallSubjectPrefix+"echo", CallQueueGroup)
	if err != nil {
		t.Fatal(err)
	}
	if err := observer.Flush(); err != nil {
		t.Fatal(err)
	}

	// OTHER keeps what it publishes in a stream of its own, named like
	// the cluster's: it lands there, not in PALYRA's.
	ojs, err := jetstream.New(other)
	if err != nil {
		t.Fatal(err)
	}
	ostream, err := ojs.CreateStream(ctx, jetstream.StreamConfig{
		Name: OpsStream, Subjects: []string{OpsSubjectPrefix + ">", EventsSubjectPrefix + ">", HeartbeatSubjectPrefix + ">"},
	})
	if err != nil {
		t.Fatal(err)
	}
	forged := []string{OpsSubjectPrefix + "install", HeartbeatSubjectPrefix + "x.heartbeat", EventsSubjectPrefix + "installed"}
	for _, subj := range forged {
		if _, err := ojs.Publish(ctx, subj, []byte("forged")); err != nil {
			t.Fatalf("OTHER publish %s: %v", subj, err)
		}
	}
	if _, err := other.Request(CallSubjectPrefix+"echo", []byte(`{"forged":true}`), 2*time.Second); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("OTHER's call to echo: %v, want no responders (no node of OTHER serves it)", err)
	}
	if err := other.Flush(); err != nil {
		t.Fatal(err)
	}
	// The marker goes through the same server after OTHER's messages: a
	// leak would reach the observer before it.
	if err := marker.Publish(HeartbeatSubjectPrefix+"marker.heartbeat", []byte("marker")); err != nil {
		t.Fatal(err)
	}
	m, err := seen.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != HeartbeatSubjectPrefix+"marker.heartbeat" {
		t.Fatalf("the PALYRA subscriber got %s %q from another account", m.Subject, m.Data)
	}
	if m, err := served.NextMsg(0); !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("the skill's endpoint got %v (%v) from another account", m, err)
	}

	oinfo, err := ostream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if oinfo.State.Msgs != uint64(len(forged)) {
		t.Fatalf("OTHER's own stream holds %d messages, want %d", oinfo.State.Msgs, len(forged))
	}
	for i, l := range links {
		after, err := l.Ops().Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after.State.Msgs != before.State.Msgs || after.State.LastSeq != before.State.LastSeq {
			t.Fatalf("node %d: %s went from %d messages (last %d) to %d (last %d)", i, OpsStream,
				before.State.Msgs, before.State.LastSeq, after.State.Msgs, after.State.LastSeq)
		}
		raw, err := l.Ops().GetLastMsgForSubject(ctx, OpsSubjectPrefix+"install")
		if err != nil || string(raw.Data) != "from the cluster" {
			t.Fatalf("node %d: last install op %v %v", i, raw, err)
		}
		ev, err := l.Events().Info(ctx)
		if err != nil || ev.State.Msgs != 0 {
			t.Fatalf("node %d: %s %+v %v, want empty", i, EventsStream, ev, err)
		}
	}
}

// TestEmbeddedTokenRefusesUnauthenticated: an embedded server with a
// token (Config.Embedded.Token, $PALYRA_CLUSTER_TOKEN) refuses a client
// without it or with another one; the node's own link presents it.
func TestEmbeddedTokenRefusesUnauthenticated(t *testing.T) {
	l, err := Dial(context.Background(), Config{NodeName: "solo", Embedded: &EmbeddedConfig{
		StoreDir: t.TempDir(), Listen: "127.0.0.1:0", Token: "s3cret-token",
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct {
		name string
		opts []nats.Option
		ok   bool
	}{
		{"no token", nil, false},
		{"another token", []nats.Option{nats.Token("guess")}, false},
		{"a user and password", []nats.Option{nats.UserInfo("palyra", "s3cret-token")}, false},
		{"the token", []nats.Option{nats.Token("s3cret-token")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := nats.Connect(l.ClientURL(), tc.opts...)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				nc.Close()
				return
			}
			if err == nil {
				nc.Close()
				t.Fatal("connected")
			}
			if !errors.Is(err, nats.ErrAuthorization) {
				t.Fatalf("error %v, want an authorization violation", err)
			}
		})
	}
}

// operatorDeployment is a nats-server in operator (JWT) mode, configured
// as nsc leaves it for a memory resolver: an operator, a system account,
// and account PALYRA with JetStream.
type operatorDeployment struct {
	url     string
	account nkeys.KeyPair // PALYRA's signing key
}

func newOperatorDeployment(t *testing.T) operatorDeployment {
	t.Helper()
	operator, err := nkeys.CreateOperator()
	if err != nil {
		t.Fatal(err)
	}
	opub, _ := operator.PublicKey()
	ojwt, err := jwt.NewOperatorClaims(opub).Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	account := func(name string, js bool) (nkeys.KeyPair, string, string) {
		kp, err := nkeys.CreateAccount()
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		c := jwt.NewAccountClaims(pub)
		c.Name = name
		if js {
			c.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
		}
		tok, err := c.Encode(operator)
		if err != nil {
			t.Fatal(err)
		}
		return kp, pub, tok
	}
	_, syspub, sysjwt := account("SYS", false)
	palyra, ppub, pjwt := account("PALYRA", true)
	dir := t.TempDir()
	opath := filepath.Join(dir, "operator.jwt")
	if err := os.WriteFile(opath, []byte(ojwt), 0o600); err != nil {
		t.Fatal(err)
	}
	s := runServer(t, fmt.Sprintf(`
listen: "127.0.0.1:-1"
jetstream { store_dir: %s }
operator: %s
system_account: %s
resolver: MEMORY
resolver_preload: {
  %s: %q
  %s: %q
}
`, confPath(filepath.Join(dir, "js")), confPath(opath), syspub, syspub, sysjwt, ppub, pjwt))
	return operatorDeployment{url: s.ClientURL(), account: palyra}
}

// creds writes a credentials file for a new user signed by account.
func (operatorDeployment) creds(t *testing.T, account nkeys.KeyPair) string {
	t.Helper()
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	upub, _ := user.PublicKey()
	ujwt, err := jwt.NewUserClaims(upub).Encode(account)
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := user.Seed()
	creds, err := jwt.FormatUserConfig(ujwt, seed)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "node.creds")
	if err := os.WriteFile(path, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDialCredsOperatorMode: Config.CredsFile joins a NATS deployment in
// operator (JWT) mode as a user of account PALYRA, and the cluster's
// streams live in that account; a user of an account the operator did not
// sign is refused with cluster_unavailable.
func TestDialCredsOperatorMode(t *testing.T) {
	ctx := context.Background()
	d := newOperatorDeployment(t)
	stranger, err := nkeys.CreateAccount()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		creds string
		ok    bool
	}{
		{"a user of PALYRA", d.creds(t, d.account), true},
		{"a user of an unknown account", d.creds(t, stranger), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Dial(ctx, Config{NodeName: "a", URLs: []string{d.url}, CredsFile: tc.creds, ConnectTimeout: 5 * time.Second})
			if !joinedOrRefused(t, ctx, l, err, tc.ok) {
				return
			}
			defer l.Close()
			ai, err := l.JetStream().AccountInfo(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ai.Streams != 5 {
				t.Fatalf("account PALYRA holds %d streams, want the cluster's 5 (2 streams, the object store, the storage and secrets buckets)", ai.Streams)
			}
		})
	}
}

// TestValidateSecurity: settings of the cluster's security that cannot
// work are refused with cluster_invalid_config, naming the setting.
func TestValidateSecurity(t *testing.T) {
	emb := func() *EmbeddedConfig { return &EmbeddedConfig{StoreDir: "x"} }
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" is valid
	}{
		{"embedded TLS with all three", Config{Embedded: emb(), TLS: TLSConfig{CAFile: "ca", CertFile: "c", KeyFile: "k"}}, ""},
		{"embedded TLS without a CA", Config{Embedded: emb(), TLS: TLSConfig{CertFile: "c", KeyFile: "k"}}, "needs a CA"},
		{"embedded TLS with only a CA", Config{Embedded: emb(), TLS: TLSConfig{CAFile: "ca"}}, "needs a CA, a certificate"},
		{"URLs with only a CA", Config{URLs: []string{"tls://n:4222"}, TLS: TLSConfig{CAFile: "ca"}}, ""},
		{"a certificate without its key", Config{URLs: []string{"tls://n:4222"}, TLS: TLSConfig{CertFile: "c"}}, "needs its key"},
		{"creds and a user", Config{URLs: []string{"nats://n:4222"}, CredsFile: "c", User: "u"}, "more than one NATS user"},
		{"nkey and creds", Config{URLs: []string{"nats://n:4222"}, CredsFile: "c", NKeyFile: "n"}, "more than one NATS user"},
		{"a password without a user", Config{URLs: []string{"nats://n:4222"}, Password: "p"}, "password without a user"},
		{"a user and password", Config{URLs: []string{"nats://n:4222"}, User: "u", Password: "p"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.NodeName = "a"
			err := tc.cfg.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want cluster_invalid_config with %q", err, tc.want)
			}
		})
	}
}

// TestDialAccountUsers: a node joins a deployment whose account PALYRA
// lists its user by nkey (Config.NKeyFile, a seed file) or by password
// (Config.User/Password, the file holding it plain or bcrypt-hashed), and
// a wrong password is refused.
func TestDialAccountUsers(t *testing.T) {
	ctx := context.Background()
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	upub, _ := user.PublicKey()
	seed, _ := user.Seed()
	seedFile := filepath.Join(t.TempDir(), "node.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	// A password kept as a bcrypt hash in the server's file, as
	// "nats server passwd" makes it (at the lowest cost: the test checks
	// the form, not the strength).
	h, err := bcrypt.GenerateFromPassword([]byte("hashed-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	hash := string(h)
	s := runServer(t, fmt.Sprintf(`
listen: "127.0.0.1:-1"
jetstream { store_dir: %s }
accounts {
  PALYRA {
    jetstream: enabled
    users: [ { nkey: %s }, { user: palyra, password: "pw" }, { user: hashed, password: %q } ]
  }
}
`, confPath(t.TempDir()), upub, hash))
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"nkey seed file", Config{NKeyFile: seedFile}, true},
		{"user and password", Config{User: "palyra", Password: "pw"}, true},
		{"user and bcrypt-hashed password", Config{User: "hashed", Password: "hashed-pw"}, true},
		{"wrong password", Config{User: "palyra", Password: "guess"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cfg
			c.NodeName, c.URLs, c.ConnectTimeout = "a", []string{s.ClientURL()}, 5*time.Second
			l, err := Dial(ctx, c)
			if !joinedOrRefused(t, ctx, l, err, tc.ok) {
				return
			}
			defer l.Close()
		})
	}
}

// lineLogger is a nats-server logger that hands every line to lines.
type lineLogger struct{ lines chan string }

func (l lineLogger) log(format string, v ...any) {
	select {
	case l.lines <- fmt.Sprintf(format, v...):
	default: // the test stopped reading
	}
}
func (l lineLogger) Noticef(format string, v ...any) { l.log(format, v...) }
func (l lineLogger) Warnf(format string, v ...any)   { l.log(format, v...) }
func (l lineLogger) Fatalf(format string, v ...any)  { l.log(format, v...) }
func (l lineLogger) Errorf(format string, v ...any)  { l.log(format, v...) }
func (l lineLogger) Debugf(format string, v ...any)  { l.log(format, v...) }
func (l lineLogger) Tracef(format string, v ...any)  { l.log(format, v...) }

// TestRecipeRefusesRogueRoutes: a server that tries to route into the
// recipe's cluster without a certificate of the cluster's CA, or without
// the route token, is refused: node 0 logs the refusal and keeps its
// routes to the cluster's nodes only.
func TestRecipeRefusesRogueRoutes(t *testing.T) {
	ca, other := newTestCA(t, "palyra-test-ca"), newTestCA(t, "other-ca")
	links := recipeCluster(t, ca)
	routesBefore := links[0].Server().NumRoutes()
	// The rogue trusts the cluster's CA (it verifies node 0) but its own
	// certificate is from another CA.
	foreign := other.issue(t, "rogue")
	foreign.CAFile = ca.CAFile
	for _, tc := range []struct {
		name  string
		tls   TLSConfig
		token string
		want  string // in the rogue's log
	}{
		{"certificate from another CA", foreign, "route-token", "tls route handshake error"},
		{"no route token", ca.issue(t, "rogue"), "", "router connection closed: authentication failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			route, err := url.Parse(links[0].RouteURL())
			if err != nil {
				t.Fatal(err)
			}
			if tc.token != "" {
				route.User = url.UserPassword("palyra", tc.token)
			}
			opts := &server.Options{ServerName: "rogue", Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true,
				Cluster: server.ClusterOpts{Name: DefaultClusterName, Host: "127.0.0.1", Port: server.RANDOM_PORT},
				Routes:  []*url.URL{route}}
			if err := embeddedTLS(opts, tc.tls); err != nil {
				t.Fatal(err)
			}
			s, err := server.NewServer(opts)
			if err != nil {
				t.Fatal(err)
			}
			lines := make(chan string, 1024)
			links[0].Server().SetLogger(lineLogger{lines}, true, false)
			go s.Start()
			defer func() {
				s.Shutdown()
				s.WaitForShutdown()
			}()
			deadline := time.After(15 * time.Second)
			for refused := false; !refused; {
				select {
				case l := <-lines:
					refused = strings.Contains(strings.ToLower(l), tc.want)
					if refused {
						t.Logf("node 0: %s", l)
					}
				case <-deadline:
					t.Fatalf("node 0 logged no %q refusal", tc.want)
				}
			}
			rz, err := links[0].Server().Routez(nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rz.Routes {
				if r.RemoteName == "rogue" {
					t.Fatalf("node 0 routes to the rogue server: %+v", r)
				}
			}
			if n := links[0].Server().NumRoutes(); n != routesBefore {
				t.Fatalf("node 0 holds %d routes, had %d", n, routesBefore)
			}
		})
	}
}

// joinedOrRefused checks a Dial's outcome: with ok, it joined and can
// append to the ops stream (true); without, it was refused with
// cluster_unavailable naming the authorization violation (false).
func joinedOrRefused(t *testing.T, ctx context.Context, l *Link, err error, ok bool) bool {
	t.Helper()
	if !ok {
		if err == nil {
			l.Close()
			t.Fatal("Dial succeeded")
		}
		if !errors.Is(err, ErrClusterUnavailable) || !strings.Contains(strings.ToLower(err.Error()), "authorization violation") {
			t.Fatalf("error %v, want cluster_unavailable with the authorization violation", err)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.JetStream().Publish(ctx, OpsSubjectPrefix+"test", []byte("x")); err != nil {
		l.Close()
		t.Fatal(err)
	}
	return true
}
