import { useEffect } from 'react';
import { api } from '../api/client';
import type { ClusterStatus } from '../api/types';
import { Badge, LoadError, time, useLoad } from '../components/common';
import { Link } from '../router';

/** How often the page asks the daemon for the cluster again. */
export const CLUSTER_REFRESH_MS = 2000;

/** How long ago t was, from now, to the tenth of a second ("—" when unknown). */
export function ago(t: string | undefined, now: number): string {
  const ms = t ? Date.parse(t) : NaN;
  if (Number.isNaN(ms) || new Date(ms).getFullYear() < 2000) return '—';
  const s = Math.max(0, now - ms) / 1000;
  return s < 60 ? `${s.toFixed(1)} s ago` : time(t);
}

/** The cluster's summary line: its name and ops-stream position, or a cluster of one. */
export function clusterSummary(st: ClusterStatus): string {
  const n = st.nodes?.length ?? 0;
  if (!st.clustered) return `Not clustered: ${st.node} is a cluster of one.`;
  return `Cluster ${st.cluster ?? ''}, answered by ${st.node}: ${n} node${n === 1 ? '' : 's'}, ops stream at ${st.stream_last}.`;
}

/** The nodes of a cluster status as a table, this node first. */
export function ClusterTable({ status, now }: { status: ClusterStatus; now: number }) {
  const nodes = status.nodes ?? [];
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="data" data-testid="cluster-table">
        <caption data-testid="cluster-summary">{clusterSummary(status)}</caption>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">State</th>
            <th scope="col">Version</th>
            <th scope="col">Skills</th>
            <th scope="col">Sidecars</th>
            <th scope="col">Calls/s</th>
            <th scope="col">Applied</th>
            <th scope="col">Last seen</th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((n) => (
            <tr key={n.name} data-testid="cluster-node" data-node={n.name} data-live={String(n.live)}>
              <th scope="row">
                {n.name}
                {n.name === status.node ? <span className="muted"> (this node)</span> : null}
              </th>
              <td>
                <Badge value={n.live ? 'live' : 'lost'} />
              </td>
              <td>{n.version || '—'}</td>
              <td className="wrap">
                {(n.skills ?? []).length === 0
                  ? '—'
                  : (n.skills ?? []).map((s, i) => (
                      <span key={s}>
                        {i > 0 ? ', ' : ''}
                        <Link to={`/skills/${encodeURIComponent(s)}`}>{s}</Link>
                      </span>
                    ))}
              </td>
              <td>{n.sidecars_alive}</td>
              <td>{n.calls_per_second.toFixed(1)}</td>
              <td>
                {status.clustered ? (
                  <>
                    {n.applied}
                    {n.applied < status.stream_last ? <span className="muted"> (catching up)</span> : null}
                  </>
                ) : (
                  '—'
                )}
              </td>
              <td>
                <time dateTime={n.last_seen}>{ago(n.last_seen, now)}</time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ClusterPage() {
  const cl = useLoad((s) => api.cluster(s), []);
  const { reload } = cl;
  useEffect(() => {
    const t = window.setInterval(reload, CLUSTER_REFRESH_MS);
    return () => window.clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return (
    <>
      <div className="page-head">
        <h1>Cluster</h1>
        <div className="toolbar">
          <button type="button" className="secondary" onClick={reload} data-testid="cluster-refresh">
            Refresh
          </button>
        </div>
      </div>
      <p className="muted">
        The palyra-host nodes this daemon knows of (palyra-host serve --cluster or --cluster-embedded), each with the skills it serves; refreshed every{' '}
        {CLUSTER_REFRESH_MS / 1000} s.
      </p>
      {cl.error ? <LoadError error={cl.error} what="the cluster" /> : null}
      {cl.data ? <ClusterTable status={cl.data} now={Date.now()} /> : cl.loading ? <p role="status">Loading…</p> : null}
    </>
  );
}
