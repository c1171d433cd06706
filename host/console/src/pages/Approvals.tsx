import { useState } from 'react';
import { api } from '../api/client';
import type { Approval, ApprovalReason, Grants } from '../api/types';
import { Badge, Banner, ConfirmDialog, errorBanner, JsonView, LoadError, time, useLoad, type BannerState } from '../components/common';

const STATES = ['pending', 'approved', 'denied', 'expired', 'used'];

/** One line per reason: "manifest: requires_approval". */
export function reasonsText(rs: ApprovalReason[] | null | undefined): string {
  return (rs ?? []).map((r) => `${r.kind}: ${r.detail}`).join(', ') || '—';
}

/** What a skill may reach, one entry per capability class that has any. */
export function reachText(g: Grants | null | undefined): string[] {
  if (!g) return [];
  const out: string[] = [];
  const add = (label: string, xs: string[] | null | undefined) => {
    if (xs && xs.length) out.push(`${label}: ${xs.join(', ')}`);
  };
  add('HTTP', g.http_hosts);
  add('Secrets', g.secret_keys);
  add('Storage', g.storage_prefixes);
  add('Channels', g.channels);
  add('Devices', g.device_capabilities);
  add('Nodes', g.node_capabilities);
  return out;
}

type Decision = { a: Approval; approve: boolean };

function ApprovalCard({ a, onDecide }: { a: Approval; onDecide?: (d: Decision) => void }) {
  const reach = reachText(a.grants);
  return (
    <article className="card approval" data-testid="approval-row" data-approval-id={a.id} data-state={a.state} aria-labelledby={`ap-${a.id}`}>
      <div className="page-head">
        <h2 id={`ap-${a.id}`}>
          <code>{a.tool_id}</code> of {a.skill_id} {a.version}
        </h2>
        <Badge value={a.state} />
      </div>
      <dl className="kv">
        <dt>Approval</dt>
        <dd>
          <code>{a.id}</code>
        </dd>
        <dt>Asked by</dt>
        <dd>
          {a.requested_by} at {time(a.requested_at)}
        </dd>
        <dt>Expires</dt>
        <dd>{time(a.expires_at)}</dd>
        <dt>Why</dt>
        <dd data-testid="approval-reasons">{reasonsText(a.reasons)}</dd>
        <dt>May reach</dt>
        <dd data-testid="approval-reach">
          {reach.length ? (
            <ul>
              {reach.map((r) => (
                <li key={r}>{r}</li>
              ))}
            </ul>
          ) : a.grants ? (
            'nothing beyond its own computation'
          ) : (
            <span className="muted">unknown (the version is gone or fails the policy)</span>
          )}
        </dd>
        {a.decided_by ? (
          <>
            <dt>Decided by</dt>
            <dd>
              {a.decided_by} at {time(a.decided_at)}
            </dd>
          </>
        ) : null}
        {a.reason ? (
          <>
            <dt>Reason</dt>
            <dd>{a.reason}</dd>
          </>
        ) : null}
      </dl>
      <h3>Input</h3>
      <JsonView value={a.input} testId={`approval-input-${a.id}`} />
      <p className="muted">
        sha256 <code>{a.input_sha256}</code>: the call runs only with exactly this input.
      </p>
      {onDecide && a.state === 'pending' ? (
        <div className="actions">
          <button type="button" className="small" onClick={() => onDecide({ a, approve: true })} data-testid={`approval-approve-${a.id}`}>
            Approve
          </button>
          <button type="button" className="danger-outline small" onClick={() => onDecide({ a, approve: false })} data-testid={`approval-deny-${a.id}`}>
            Deny
          </button>
        </div>
      ) : null}
    </article>
  );
}

export function ApprovalsPage() {
  const [state, setState] = useState('pending');
  const list = useLoad((s) => api.approvals({ state }, s), [state]);
  const [banner, setBanner] = useState<BannerState | null>(null);
  const [deciding, setDeciding] = useState<Decision | null>(null);
  const [reason, setReason] = useState('');
  const approvals = list.data?.approvals ?? [];

  const decide = async (d: Decision) => {
    try {
      const out = await api.decideApproval(d.a.id, d.approve, reason.trim());
      setBanner({ kind: 'success', title: `Approval ${out.id}: ${out.state}.` });
    } catch (err) {
      setBanner(errorBanner(`Could not ${d.approve ? 'approve' : 'deny'} approval ${d.a.id}`, err));
    }
    setDeciding(null);
    setReason('');
    list.reload();
  };

  return (
    <>
      <h1>Approvals</h1>
      <p className="muted">
        Calls of tools that need a human’s approval wait here: the tool’s manifest asks for it (requires_approval, default_sensitive), the operator profile marks
        a capability class the skill is granted, or a run hook held the call. Approved, the caller’s call runs once with the input shown.
      </p>
      <Banner banner={banner} onClose={() => setBanner(null)} />
      <div className="toolbar">
        <label htmlFor="ap-state">Show</label>
        <select id="ap-state" value={state} onChange={(e) => setState(e.target.value)} data-testid="approvals-state">
          <option value="">all</option>
          {STATES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <button type="button" className="secondary small" onClick={() => list.reload()} data-testid="approvals-reload">
          Reload
        </button>
      </div>
      {list.error ? <LoadError error={list.error} what="the approvals" /> : null}
      <p data-testid="approvals-count" aria-live="polite">
        {list.loading ? 'Loading…' : `${approvals.length} approval${approvals.length === 1 ? '' : 's'}${state ? ` ${state}` : ''}`}
      </p>
      {approvals.map((a) => (
        <ApprovalCard key={a.id} a={a} onDecide={(d) => setDeciding(d)} />
      ))}
      {deciding ? (
        <ConfirmDialog
          title={`${deciding.approve ? 'Approve' : 'Deny'} ${deciding.a.tool_id} of ${deciding.a.skill_id}?`}
          confirmLabel={deciding.approve ? 'Approve' : 'Deny'}
          danger={!deciding.approve}
          canConfirm={deciding.approve || reason.trim() !== ''}
          onClose={() => {
            setDeciding(null);
            setReason('');
          }}
          onConfirm={() => decide(deciding)}
        >
          <p>
            Approval <code>{deciding.a.id}</code>, asked by {deciding.a.requested_by}.
          </p>
          <div className="field">
            <label htmlFor="ap-reason">{deciding.approve ? 'Reason (optional)' : 'Reason (required)'}</label>
            <input id="ap-reason" value={reason} onChange={(e) => setReason(e.target.value)} data-autofocus data-testid="approval-reason" />
          </div>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
