package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
)

// clusterCommand is `palyra cluster`: the cluster a daemon belongs to
// (--url), or the state directory's host as a cluster of one.
func (a *app) clusterCommand() *cobra.Command {
	c := group("cluster", "Show the cluster of palyra-host nodes", a.clusterStatusCommand())
	c.Long = "cluster shows the nodes of a palyra-host cluster (palyra-host serve --cluster or --cluster-embedded) as the daemon at --url sees them: " +
		"each node's version, whether it is live, the skills it serves, its sidecars alive, its calls per second, the ops-stream sequence it has applied and when it was last heard. " +
		"A daemon that is not clustered, or the state directory without --url, is a cluster of one.\n\n" + daemonModeHelp
	a.registerDaemonFlags(c)
	return c
}

func (a *app) clusterStatusCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "status",
		Example: "  palyra cluster status --url https://host-a:7443\n  palyra cluster status -o json",
		Short:   "List the cluster's nodes and what each serves",
		Long: "status lists the nodes, this one first, and the last sequence of the cluster's ops stream (a node whose applied sequence is below it is catching up). " +
			"With --json it prints the daemon's GET /v1/cluster document.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sv, err := a.service(cmd, &stateFlags{})
			if err != nil {
				return err
			}
			defer sv.Close()
			st, err := sv.Cluster(cmd.Context())
			if err != nil {
				return err
			}
			if st.Nodes == nil {
				st.Nodes = []host.NodeStatus{}
			}
			return a.emit(st, clusterTable(st, time.Now(), a.wide()))
		},
	}
}

// clusterTable is the text of cluster status: a line on the cluster, then
// one aligned row per node ("-" for what a node does not report).
func clusterTable(st *host.ClusterStatus, now time.Time, wide bool) string {
	var b strings.Builder
	if st.Clustered {
		fmt.Fprintf(&b, "cluster %s, answered by %s, ops stream at %d, %d node(s)\n", st.Cluster, st.Node, st.StreamLast, len(st.Nodes))
	} else {
		fmt.Fprintf(&b, "not clustered: %s is a cluster of one\n", st.Node)
	}
	t := output.NewTable(output.Column{Header: "node"}, output.Column{Header: "live"}, output.Column{Header: "version"},
		output.Column{Header: "skills"}, output.Column{Header: "sidecars"}, output.Column{Header: "calls/s"},
		output.Column{Header: "applied"}, output.Column{Header: "policy"}, output.Column{Header: "seen_ago"},
		output.Column{Header: "policy_sha256", Wide: true})
	for _, n := range st.Nodes {
		skills := strings.Join(n.Skills, ",")
		// The policy digest's first 12 hex: a node whose policy differs
		// stands out (-o wide: all of it).
		pol := n.PolicySHA256
		if len(pol) > 12 {
			pol = pol[:12]
		}
		t.Row(n.Name, n.Live, dash(n.Version), dash(skills), n.SidecarsAlive,
			strconv.FormatFloat(n.CallsPerSecond, 'f', 1, 64), applied(st, n), dash(pol), lastSeen(n.LastSeen, now), dash(n.PolicySHA256))
	}
	b.WriteString(t.String(wide))
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// applied is a node's applied sequence, "-" when not clustered.
func applied(st *host.ClusterStatus, n host.NodeStatus) string {
	if !st.Clustered {
		return "-"
	}
	return strconv.FormatUint(n.Applied, 10)
}

// lastSeen is how long ago a node was heard, to the tenth of a second.
func lastSeen(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return max(now.Sub(t), 0).Round(100 * time.Millisecond).String()
}
