package cluster

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/palyra-go/palyra/host"
)

// heartbeatSubject is node's heartbeat subject.
func heartbeatSubject(node string) string {
	return HeartbeatSubjectPrefix + node + HeartbeatSuffix
}

// startHeartbeats subscribes to every node's heartbeats and starts
// publishing this node's.
func (r *router) startHeartbeats() error {
	sub, err := r.n.link.nc.Subscribe(HeartbeatSubjectPrefix+"*"+HeartbeatSuffix, func(m *nats.Msg) {
		var hb heartbeat
		if json.Unmarshal(m.Data, &hb) != nil || hb.Name == "" || heartbeatSubject(hb.Name) != m.Subject {
			return
		}
		r.peers.heard(hb, time.Now())
	})
	if err != nil {
		return Unavailable(err)
	}
	r.hbSub = sub
	r.n.goLoop(func(ctx context.Context) {
		cfg := r.n.link.cfg
		t := time.NewTicker(cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			r.beat(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return nil
}

// status is this node's heartbeat now.
func (r *router) status(ctx context.Context) heartbeat {
	cfg := r.n.link.cfg
	hb := heartbeat{
		Name: cfg.NodeName, Version: r.n.opts.Version, Skills: r.servedSkills(),
		CallsPerSecond: r.calls.perSecond(time.Now()), Applied: r.n.Applied(),
		Labels: cfg.Labels, StartedAt: r.n.start, PolicySHA256: r.n.host.PolicySHA256(),
	}
	if sc, err := r.n.host.Sidecars(ctx); err == nil {
		for _, s := range sc {
			if s.Status == host.SidecarRunning {
				hb.SidecarsAlive++
			}
		}
	}
	return hb
}

// beat publishes this node's heartbeat; a failure is logged at debug
// level (the connection logs its own losses).
func (r *router) beat(ctx context.Context) {
	data, err := json.Marshal(r.status(ctx))
	if err == nil {
		err = r.n.link.nc.Publish(heartbeatSubject(r.n.Name()), data)
	}
	if err != nil {
		r.n.log.Debug("heartbeat not sent", "error", err)
	}
}
