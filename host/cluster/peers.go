package cluster

import (
	"slices"
	"sync"
	"time"
)

// heartbeat is the status a node publishes every HeartbeatInterval on
// HeartbeatSubjectPrefix+<node>+HeartbeatSuffix.
type heartbeat struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	// Skills are the skills the node serves now.
	Skills         []string          `json:"skills"`
	SidecarsAlive  int               `json:"sidecars_alive"`
	CallsPerSecond float64           `json:"calls_per_second"`
	Applied        uint64            `json:"applied"`
	Labels         map[string]string `json:"labels,omitempty"`
	StartedAt      time.Time         `json:"started_at"`
	// PolicySHA256 is host.PolicyDigest of the node's operator profile.
	PolicySHA256 string `json:"policy_sha256,omitempty"`
}

// peer is a node as its last heartbeat described it; seen is when this
// node received it (its own clock).
type peer struct {
	hb   heartbeat
	seen time.Time
}

// peers is the table of the nodes heard from. A node unheard for window
// is not live.
type peers struct {
	window time.Duration
	mu     sync.Mutex
	m      map[string]peer
}

func newPeers(window time.Duration) *peers {
	return &peers{window: window, m: map[string]peer{}}
}

// heard records a heartbeat received at now.
func (p *peers) heard(hb heartbeat, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[hb.Name] = peer{hb: hb, seen: now}
}

// lost reports whether node, which accepted a call at since, is lost at
// now: unheard for the liveness window since its last heartbeat or since
// it accepted, whichever is later (a node that accepted is live then).
func (p *peers) lost(node string, since, now time.Time) bool {
	p.mu.Lock()
	last := p.m[node].seen
	p.mu.Unlock()
	if since.After(last) {
		last = since
	}
	return now.Sub(last) > p.window
}

// serving lists the live nodes whose last heartbeat lists skill, except
// the names in not, the most recently heard first (a node that just died
// sorts after those still beating).
func (p *peers) serving(skill string, now time.Time, not ...string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var live []peer
	for name, pr := range p.m {
		if now.Sub(pr.seen) <= p.window && slices.Contains(pr.hb.Skills, skill) && !slices.Contains(not, name) {
			live = append(live, pr)
		}
	}
	slices.SortFunc(live, func(a, b peer) int { return b.seen.Compare(a.seen) })
	out := make([]string, len(live))
	for i, pr := range live {
		out[i] = pr.hb.Name
	}
	return out
}

// all returns every peer heard from, by name.
func (p *peers) all() []peer {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]peer, 0, len(p.m))
	for _, pr := range p.m {
		out = append(out, pr)
	}
	slices.SortFunc(out, func(a, b peer) int {
		switch {
		case a.hb.Name < b.hb.Name:
			return -1
		case a.hb.Name > b.hb.Name:
			return 1
		}
		return 0
	})
	return out
}

// rate counts events per second over the last rateWindow seconds.
type rate struct {
	mu      sync.Mutex
	buckets [rateWindow]struct {
		sec int64
		n   int
	}
}

// rateWindow is the window, in seconds, of a node's calls per second.
const rateWindow = 5

// add counts one event at now.
func (r *rate) add(now time.Time) {
	s := now.Unix()
	r.mu.Lock()
	defer r.mu.Unlock()
	b := &r.buckets[s%rateWindow]
	if b.sec != s {
		b.sec, b.n = s, 0
	}
	b.n++
}

// perSecond is the mean rate over the last rateWindow whole seconds.
func (r *rate) perSecond(now time.Time) float64 {
	s := now.Unix()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, b := range r.buckets {
		if b.sec < s && b.sec >= s-rateWindow {
			n += b.n
		}
	}
	return float64(n) / rateWindow
}
