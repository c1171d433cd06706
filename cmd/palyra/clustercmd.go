package main

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

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
			return a.emit(st, clusterTable(st, time.Now()))
		},
	}
}

// clusterTable is the text of cluster status: a line on the cluster, then
// one aligned row per node ("-" for what a node does not report).
func clusterTable(st *host.ClusterStatus, now time.Time) string {
	var b strings.Builder
	if st.Clustered {
		fmt.Fprintf(&b, "cluster %s, answered by %s, ops stream at %d, %d node(s)\n", st.Cluster, st.Node, st.StreamLast, len(st.Nodes))
	} else {
		fmt.Fprintf(&b, "not clustered: %s is a cluster of one\n", st.Node)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tLIVE\tVERSION\tSKILLS\tSIDECARS\tCALLS/S\tAPPLIED\tPOLICY\tLAST_SEEN")
	for _, n := range st.Nodes {
		skills := strings.Join(n.Skills, ",")
		// The policy digest's first 12 hex: a node whose policy differs
		// stands out.
		pol := n.PolicySHA256
		if len(pol) > 12 {
			pol = pol[:12]
		}
		fmt.Fprintf(tw, "%s\t%t\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", n.Name, n.Live, dash(n.Version), dash(skills), n.SidecarsAlive,
			strconv.FormatFloat(n.CallsPerSecond, 'f', 1, 64), applied(st, n), dash(pol), lastSeen(n.LastSeen, now))
	}
	tw.Flush()
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
	return max(now.Sub(t), 0).Round(100*time.Millisecond).String() + " ago"
}
