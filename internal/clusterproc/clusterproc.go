// Package clusterproc runs a palyra-host cluster as real processes on
// loopback: N `palyra-host serve --cluster-embedded` nodes (each with its
// own state directory, TMPDIR and embedded nats-server, the route ports
// picked ahead so that every node lists every route), a client per node,
// kill -9 of a node (reaped, its leftovers swept), its restart on the same
// state directory, a node added later. The process-level cluster tests
// (host/cluster/e2e), palyra-bench's cluster scenario and its
// --cluster-demo share it; it reads no environment variable.
package clusterproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/palyra-go/palyra/host/daemon"
	"github.com/palyra-go/palyra/host/daemon/client"
	"github.com/palyra-go/palyra/host/rundir"
	"github.com/palyra-go/palyra/host/statedir"
	"github.com/palyra-go/palyra/internal/proctest"
)

// Options configure a cluster.
type Options struct {
	// Bin is the directory holding palyra-host and palyra-sidecar.
	Bin string
	// Dir is the cluster's working directory (state directories, TMPDIRs,
	// logs); the caller creates and removes it.
	Dir string
	// Args are extra arguments of every node's serve command, NodeArgs of
	// the node named (e.g. --cluster-skills).
	Args     []string
	NodeArgs map[string][]string
	// Env are extra environment variables (KEY=VALUE) of every node.
	Env []string
	// StartTimeout bounds a node's start to ready (default 60 s).
	StartTimeout time.Duration
	// Logf receives the harness's progress (nil: discarded).
	Logf func(format string, args ...any)
}

// Node is one palyra-host process of the cluster.
type Node struct {
	// Name is the node's name (--node-name).
	Name string
	// State is its state directory, Tmp its TMPDIR (sidecar sockets).
	State, Tmp string
	// RoutePort is its embedded server's route port.
	RoutePort int
	// URL and Token reach its API; Client is a client of it (replaced on
	// restart).
	URL, Token string
	Client     *client.Client
	// KilledAt is when Kill last sent SIGKILL to it.
	KilledAt time.Time

	cmd     *exec.Cmd
	done    chan struct{}
	exitErr error
	stdout  *proctest.Buffer
	stderr  *proctest.Buffer
	starts  int
}

// PID is the node's process id (0 when not running).
func (n *Node) PID() int {
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// Running reports whether the node's process has not exited.
func (n *Node) Running() bool {
	if n.done == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// Output is the node's stdout and stderr since its last start.
func (n *Node) Output() string {
	if n.stdout == nil {
		return ""
	}
	return "stdout:\n" + n.stdout.String() + "\nstderr:\n" + n.stderr.String()
}

// Cluster is the running nodes.
type Cluster struct {
	opts  Options
	mu    sync.Mutex
	nodes []*Node
}

// FreePorts returns n loopback TCP ports that were free a moment ago.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Start starts the nodes named (their route ports picked ahead) at once
// and waits until every one is ready. On error nothing is left running.
func Start(ctx context.Context, opts Options, names ...string) (*Cluster, error) {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	c := &Cluster{opts: opts}
	ports, err := FreePorts(len(names))
	if err != nil {
		return nil, err
	}
	for i, name := range names {
		n := &Node{Name: name, RoutePort: ports[i], State: filepath.Join(opts.Dir, name, "state"), Tmp: filepath.Join(opts.Dir, name, "tmp")}
		c.nodes = append(c.nodes, n)
	}
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		if err := c.launch(n); err != nil {
			errs[i] = err
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.waitReady(ctx, n) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return c, nil
}

// Nodes returns the cluster's nodes, running or not, in the order they were
// started or added.
func (c *Cluster) Nodes() []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Node(nil), c.nodes...)
}

// Node returns the node named.
func (c *Cluster) Node(name string) *Node {
	for _, n := range c.Nodes() {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// routes lists every node's route listener.
func (c *Cluster) routes() string {
	var r []string
	for _, n := range c.Nodes() {
		r = append(r, fmt.Sprintf("nats-route://127.0.0.1:%d", n.RoutePort))
	}
	return strings.Join(r, ",")
}

// launch starts n's process (without waiting for it to be ready).
func (c *Cluster) launch(n *Node) error {
	for _, d := range []string{n.State, n.Tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	args := append([]string{"serve", "--state-dir", n.State, "--listen", "127.0.0.1:0", "--log-level", "debug",
		"--node-name", n.Name, "--cluster-embedded", "--cluster-listen", "127.0.0.1:0",
		"--cluster-route-listen", fmt.Sprintf("127.0.0.1:%d", n.RoutePort), "--cluster-routes", c.routes()}, c.opts.Args...)
	args = append(args, c.opts.NodeArgs[n.Name]...)
	n.cmd = exec.Command(filepath.Join(c.opts.Bin, "palyra-host"), args...)
	n.cmd.Env = append(append(os.Environ(), "TMPDIR="+n.Tmp, "PALYRA_SIDECAR="+filepath.Join(c.opts.Bin, "palyra-sidecar")), c.opts.Env...)
	n.stdout, n.stderr = &proctest.Buffer{}, &proctest.Buffer{}
	n.cmd.Stdout, n.cmd.Stderr = n.stdout, n.stderr
	n.done, n.exitErr, n.URL, n.Token, n.Client = make(chan struct{}), nil, "", "", nil
	if err := n.cmd.Start(); err != nil {
		return fmt.Errorf("start node %s: %w", n.Name, err)
	}
	n.starts++
	done, cmd := n.done, n.cmd
	go func() { n.exitErr = cmd.Wait(); close(done) }()
	c.opts.Logf("node %s: started pid %d (route port %d)", n.Name, cmd.Process.Pid, n.RoutePort)
	return nil
}

// waitReady waits until n wrote its daemon.json and answers /readyz, then
// makes its client.
func (c *Cluster) waitReady(ctx context.Context, n *Node) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.StartTimeout)
	defer cancel()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	wait := func() error {
		select {
		case <-n.done:
			return fmt.Errorf("node %s exited before it was ready: %v\n%s", n.Name, n.exitErr, tail(n.stderr.String(), 4000))
		case <-ctx.Done():
			return fmt.Errorf("node %s not ready: %w\n%s", n.Name, ctx.Err(), tail(n.stderr.String(), 4000))
		case <-tick.C:
			return nil
		}
	}
	for {
		if info, err := daemon.ReadInfo(n.State); err == nil && info.PID == n.PID() {
			n.URL = info.URL
			break
		}
		if err := wait(); err != nil {
			return err
		}
	}
	tok, err := daemon.ReadToken(daemon.TokenPath(n.State))
	if err != nil {
		return err
	}
	n.Token = tok
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.URL+"/readyz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if err := wait(); err != nil {
			return err
		}
	}
	cl, err := client.New(n.URL, n.Token, client.WithPrincipal("user:cluster-test"))
	if err != nil {
		return err
	}
	n.Client = cl
	c.opts.Logf("node %s: ready at %s", n.Name, n.URL)
	return nil
}

// Kill kills the node's process with SIGKILL, reaps it and its sidecars
// (which exit when their host's connection ends), and sweeps what they
// left in its TMPDIR and state directory, as an operator's restart would.
func (c *Cluster) Kill(name string) error {
	n := c.Node(name)
	if n == nil || !n.Running() {
		return fmt.Errorf("node %s is not running", name)
	}
	kids := proctest.Children(n.PID())
	n.KilledAt = time.Now()
	if err := n.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-n.done
	c.opts.Logf("node %s: killed (pid %d)", name, n.PID())
	if err := waitGone(kids, 10*time.Second); err != nil {
		return fmt.Errorf("node %s: %w", name, err)
	}
	_, err := rundir.Sweep(statedir.At(n.State), n.Tmp)
	return err
}

// Restart starts a stopped node again on its state directory and waits
// until it is ready.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	n := c.Node(name)
	if n == nil || n.Running() {
		return fmt.Errorf("node %s is running or unknown", name)
	}
	if err := c.launch(n); err != nil {
		return err
	}
	return c.waitReady(ctx, n)
}

// Add starts a new node (a fresh state directory) that joins the running
// cluster, and waits until it is ready.
func (c *Cluster) Add(ctx context.Context, name string) (*Node, error) {
	if c.Node(name) != nil {
		return nil, fmt.Errorf("node %s exists", name)
	}
	ports, err := FreePorts(1)
	if err != nil {
		return nil, err
	}
	n := &Node{Name: name, RoutePort: ports[0], State: filepath.Join(c.opts.Dir, name, "state"), Tmp: filepath.Join(c.opts.Dir, name, "tmp")}
	c.mu.Lock()
	c.nodes = append(c.nodes, n)
	c.mu.Unlock()
	if err := c.launch(n); err != nil {
		return nil, err
	}
	return n, c.waitReady(ctx, n)
}

// Stop stops a running node with SIGTERM and checks its clean exit: status
// 0, no child process left, nothing left in its TMPDIR or in any run
// directory of its state (host/rundir), no daemon.json.
func (c *Cluster) Stop(ctx context.Context, name string) error {
	n := c.Node(name)
	if n == nil || !n.Running() {
		return nil
	}
	kids := proctest.Children(n.PID())
	if err := n.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-n.done:
	case <-ctx.Done():
		n.cmd.Process.Kill()
		<-n.done
		return fmt.Errorf("node %s did not exit after SIGTERM: %w", name, ctx.Err())
	}
	var errs []error
	if n.exitErr != nil {
		errs = append(errs, fmt.Errorf("node %s exit: %w\n%s", name, n.exitErr, tail(n.stderr.String(), 4000)))
	}
	errs = append(errs, waitGone(kids, 10*time.Second))
	if left := Leftovers(n.Tmp); len(left) > 0 {
		errs = append(errs, fmt.Errorf("node %s left in its TMPDIR: %v", name, left))
	}
	if left, err := rundir.Leftovers(statedir.At(n.State), n.Tmp); err != nil || len(left) > 0 {
		errs = append(errs, fmt.Errorf("node %s left run directories: %v %v", name, left, err))
	}
	if _, err := os.Stat(daemon.InfoPath(n.State)); !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("node %s left its daemon.json: %v", name, err))
	}
	c.opts.Logf("node %s: stopped", name)
	return errors.Join(errs...)
}

// Close stops every running node (SIGTERM, all at once: a node waiting for
// its peers' quorum must not outlive them) and reports what did not end
// cleanly. A node that does not exit within 60 s is killed.
func (c *Cluster) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	nodes := c.Nodes()
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.Stop(ctx, n.Name) }()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Leftovers lists the entries under dir (what a stopped node left in its
// TMPDIR).
func Leftovers(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && path != dir {
			out = append(out, path)
		}
		return nil
	})
	return out
}

// waitGone waits until none of pids is alive.
func waitGone(pids []int, within time.Duration) error {
	deadline := time.Now().Add(within)
	var left []int
	for _, pid := range pids {
		for proctest.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if proctest.Alive(pid) {
			left = append(left, pid)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("processes %v outlived their node", left)
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
