import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Chart } from '../a2ui/Chart';
import { api, ApiError } from '../api/client';
import type { AuditReport, HookBinding, OutdatedSkill, SkillInfo, SkillMetrics, StreamEvent } from '../api/types';
import { Badge, Banner, ConfirmDialog, errorBanner, JsonView, LoadError, time, useLoad, type BannerState } from '../components/common';
import { Link, useRouter } from '../router';
import { followEvents } from '../sse/stream';
import { ConfigSection } from './SkillConfig';
import { UpdateAvailable, UpdateDialog } from './registry';

/** The source kinds (inventory) an update can come from. */
const REGISTRY_KINDS = new Set(['local_registry', 'remote_registry', 'oci']);

export type Action = 'verify' | 'audit' | 'quarantine' | 'enable' | 'disable' | 'remove';

const ACTIONS: { a: Action; label: string; danger?: boolean }[] = [
  { a: 'verify', label: 'Verify' },
  { a: 'audit', label: 'Audit' },
  { a: 'quarantine', label: 'Quarantine', danger: true },
  { a: 'enable', label: 'Enable' },
  { a: 'disable', label: 'Disable', danger: true },
  { a: 'remove', label: 'Remove', danger: true },
];

/**
 * The actions that apply to a version in this state: Verify, Audit and
 * Remove always; Quarantine unless it is quarantined; Enable only when it
 * is not active (disabled, quarantined, or held by a runtime quarantine);
 * Disable unless it is disabled.
 */
export function availableActions(inv: { status: string; runtime_status?: { quarantine_status?: string } }): Action[] {
  const quarantined = inv.status === 'quarantined' || inv.runtime_status?.quarantine_status === 'quarantined';
  return ACTIONS.map((x) => x.a).filter((a) => {
    switch (a) {
      case 'quarantine':
        return !quarantined;
      case 'enable':
        return inv.status !== 'active' || quarantined;
      case 'disable':
        return inv.status !== 'disabled';
      default:
        return true;
    }
  });
}

/** The "Errors by code" entries of a skill's metrics: every code but ok (a success is not an error), most frequent first. */
export function errorCodes(byCode: Record<string, number> | undefined | null): [string, number][] {
  return Object.entries(byCode ?? {})
    .filter(([k, v]) => k !== 'ok' && k !== '' && v > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))) : []);

/** Rows of the capabilities table: what the manifest asks for and what policy granted. */
export function capabilityRows(manifestCaps: unknown, grants: unknown): { name: string; requested: string[]; granted: string[] | null }[] {
  const c = isObj(manifestCaps) ? manifestCaps : {};
  const g = isObj(grants) ? grants : null;
  const fs = isObj(c.filesystem) ? c.filesystem : {};
  const secrets = Array.isArray(c.secrets)
    ? c.secrets.flatMap((s) => (isObj(s) ? strs(s.key_names).map((k) => `${String(s.scope)}/${k}`) : []))
    : [];
  const gr = (k: string) => (g ? strs(g[k]) : null);
  return [
    { name: 'HTTP egress', requested: strs(c.http_egress_allowlist), granted: gr('http_hosts') },
    { name: 'Secrets', requested: secrets, granted: gr('secret_keys') },
    { name: 'Storage', requested: [...strs(fs.write_roots), ...strs(fs.read_roots).map((r) => `${r} (read)`)], granted: gr('storage_prefixes') },
    { name: 'Channels', requested: strs(c.channels), granted: gr('channels') },
    { name: 'Device capabilities', requested: strs(c.device_capabilities), granted: gr('device_capabilities') },
    { name: 'Node capabilities', requested: strs(c.node_capabilities), granted: gr('node_capabilities') },
  ];
}

function List({ items }: { items: string[] | null }) {
  if (items === null) return <span className="muted">not recorded</span>;
  if (items.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="plain">
      {items.map((x, i) => (
        <li key={i}>
          <code>{x}</code>
        </li>
      ))}
    </ul>
  );
}

function Section({ title, id, children }: { title: string; id: string; children: ReactNode }) {
  return (
    <section aria-labelledby={`${id}-h`} className="card" data-testid={`section-${id}`}>
      <h2 id={`${id}-h`}>{title}</h2>
      {children}
    </section>
  );
}

function AuditSection({ report }: { report: AuditReport | undefined }) {
  if (!report) return <p className="muted">No audit report was recorded.</p>;
  return (
    <>
      <p>
        <Badge value={report.passed ? 'pass' : 'fail'} /> {report.checks.length} checks, generated {time(report.generated_at_unix_ms)}; trust decision{' '}
        {report.trust_decision || '—'}.
      </p>
      {report.quarantine_reasons?.length ? (
        <div className="banner banner-error">
          <div className="banner-body">
            <strong>Quarantine reasons</strong>
            <ul>
              {report.quarantine_reasons.map((r, i) => (
                <li key={i}>{r}</li>
              ))}
            </ul>
          </div>
        </div>
      ) : null}
      <div className="table-wrap" tabIndex={0}>
        <table className="data" data-testid="audit-checks">
          <caption>Audit checks</caption>
          <thead>
            <tr>
              <th scope="col">Check</th>
              <th scope="col">Status</th>
              <th scope="col">Severity</th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {report.checks.map((c, i) => (
              <tr key={i} data-testid="audit-check">
                <th scope="row">
                  <code>{c.check_id}</code>
                </th>
                <td>
                  <Badge value={c.status} />
                </td>
                <td>{c.severity}</td>
                <td className="wrap">
                  {c.message}
                  {c.details && Object.keys(c.details).length ? (
                    <details>
                      <summary>Details</summary>
                      <JsonView value={c.details} />
                    </details>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {Array.isArray(report.manifest_warnings) && report.manifest_warnings.length ? (
        <details>
          <summary>Manifest warnings ({report.manifest_warnings.length})</summary>
          <JsonView value={report.manifest_warnings} />
        </details>
      ) : null}
    </>
  );
}

/** Milliseconds for people: one decimal below 100, whole above. */
export function ms(v: number | undefined): string {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '—';
  return v < 100 ? v.toFixed(1) : Math.round(v).toString();
}

function MetricsSection({ skillId, refresh }: { skillId: string; refresh: number }) {
  const m = useLoad((s) => api.metrics(skillId, s), [skillId, refresh]);
  if (m.loading && !m.data) return <p>Loading…</p>;
  if (m.error) {
    if (m.error instanceof ApiError && m.error.status === 404) return <p className="muted">This daemon has no per-skill metrics ({m.error.code}).</p>;
    return <LoadError error={m.error} what="the metrics" />;
  }
  const d = m.data as SkillMetrics;
  const byTool = Object.entries(d.by_tool ?? {});
  const byCode = errorCodes(d.by_code);
  return (
    <>
      <dl className="kv" data-testid="metrics">
        <dt>Calls</dt>
        <dd data-testid="metrics-calls">{d.calls_total}</dd>
        <dt>Errors</dt>
        <dd>{d.errors_total}</dd>
        <dt>Duration (ms)</dt>
        <dd>
          mean {ms(d.duration_ms?.mean)}, p50 {ms(d.duration_ms?.p50)}, p95 {ms(d.duration_ms?.p95)}, max {ms(d.duration_ms?.max)}
        </dd>
        <dt>Fuel consumed</dt>
        <dd>{d.fuel_consumed_total}</dd>
        {typeof d.peak_memory_bytes_max === 'number' ? (
          <>
            <dt>Peak memory</dt>
            <dd>{(d.peak_memory_bytes_max / 1048576).toFixed(1)} MiB</dd>
          </>
        ) : null}
        <dt>Last call</dt>
        <dd>{time(d.last_call_at)}</dd>
        <dt>Errors by code</dt>
        <dd data-testid="metrics-errors-by-code">{byCode.length ? byCode.map(([k, v]) => `${k}: ${v}`).join(', ') : 'none'}</dd>
      </dl>
      {byTool.length ? <Chart title="Calls by tool" kind="bar" series={byTool.map(([label, value]) => ({ label, value }))} /> : null}
      {d.capabilities ? (
        <details>
          <summary>Capability use</summary>
          <JsonView value={d.capabilities} />
        </details>
      ) : null}
    </>
  );
}

function LiveFeed({ skillId, after, onEvent }: { skillId: string; after: number | undefined; onEvent: () => void }) {
  const [events, setEvents] = useState<StreamEvent[]>([]);
  const [status, setStatus] = useState('connecting');
  const cb = useRef(onEvent);
  cb.current = onEvent;
  useEffect(() => {
    const ac = new AbortController();
    followEvents({
      after,
      signal: ac.signal,
      onStatus: (s) => setStatus(s),
      onEvent: (e) => {
        if (e.skill_id !== skillId) return;
        setEvents((xs) => [e, ...xs].slice(0, 10));
        cb.current();
      },
    });
    return () => ac.abort();
    // The feed starts once per skill; `after` is only where it starts.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [skillId]);
  return (
    <>
      <p className="muted">
        Stream: <span data-testid="feed-status">{status}</span>
      </p>
      <ul className="feed" aria-live="polite" data-testid="live-feed">
        {events.length === 0 ? <li className="muted">No new events yet.</li> : null}
        {events.map((e, i) => (
          <li key={`${e.id}-${i}`} data-testid="live-event" data-kind={e.kind}>
            <time dateTime={e.at}>{time(e.at)}</time> <strong>{e.kind}</strong> {e.version} {e.status ? <Badge value={e.status} /> : null} {e.reason}
            {e.operator_principal ? <span className="muted"> by {e.operator_principal}</span> : null}
          </li>
        ))}
      </ul>
    </>
  );
}

export function SkillDetailPage({ skillId }: { skillId: string }) {
  const { search, navigate } = useRouter();
  const version = new URLSearchParams(search).get('version') ?? undefined;
  const [refresh, setRefresh] = useState(0);
  const info = useLoad((s) => api.skill(skillId, version, s), [skillId, version, refresh]);
  const versions = useLoad((s) => api.skills({ skill_id: skillId }, s), [skillId, refresh]);
  const sidecars = useLoad((s) => api.sidecars(s), [refresh]);
  // Only a skill installed from a registry has a source to look at; for
  // any other the daemon answers no_source.
  const sourceKind = info.data?.inventory.source.kind ?? '';
  const fromRegistry = REGISTRY_KINDS.has(sourceKind);
  const outdated = useLoad((s) => (fromRegistry ? api.outdated(skillId, s) : Promise.resolve(null)), [skillId, refresh, fromRegistry]);
  const [updating, setUpdating] = useState<OutdatedSkill | null>(null);
  const [banner, setBanner] = useState<BannerState | null>(null);
  const [action, setAction] = useState<Action | null>(null);
  const [reason, setReason] = useState('');
  const [override, setOverride] = useState(true);
  const [purge, setPurge] = useState(false);
  // The answer to a remove the enabled hook bindings of the skill refused
  // (412 skill_referenced_by_hook): the daemon's message and the bindings.
  const [refs, setRefs] = useState<{ message: string; bindings: HookBinding[] } | null>(null);

  // Set while a remove is under way: the live feed's skill:removed (which
  // may come before the answer) must not reload a skill that is gone.
  const removing = useRef(false);

  const d = info.data as SkillInfo | undefined;
  const reload = () => {
    if (!removing.current) setRefresh((n) => n + 1);
  };

  if (info.error && !d) {
    return (
      <>
        <h1>{skillId}</h1>
        <LoadError error={info.error} what={`skill ${skillId}`} />
        <p>
          <Link to="/skills">Back to the skills</Link>
        </p>
      </>
    );
  }
  if (!d) return <p aria-busy="true">Loading {skillId}…</p>;

  const inv = d.inventory;
  const tools = d.manifest?.entrypoints?.tools ?? [];
  const history = d.status_history ?? [];
  const lastHistoryId = history.reduce((m, h) => Math.max(m, h.id), 0);
  const cars = (sidecars.data?.sidecars ?? []).filter((s) => s.skill_id === skillId);

  const open = (a: Action) => {
    setReason('');
    setOverride(true);
    setPurge(false);
    setRefs(null);
    setAction(a);
  };

  const run = async (a: Action, force = false) => {
    const v = inv.version;
    try {
      let out: unknown;
      switch (a) {
        case 'verify':
          out = await api.verify(skillId, v);
          break;
        case 'audit':
          out = await api.audit(skillId, v);
          break;
        case 'quarantine':
          out = await api.quarantine(skillId, v, reason.trim());
          break;
        case 'enable':
          // The override is of a quarantine: only sent when there is one.
          out = await api.enable(skillId, v, reason.trim(), override && (inv.status === 'quarantined' || inv.runtime_status.quarantine_status === 'quarantined'));
          break;
        case 'disable':
          out = await api.disable(skillId, v, reason.trim());
          break;
        case 'remove':
          removing.current = true;
          out = await api.remove(skillId, v, purge, force);
          break;
      }
      const label = ACTIONS.find((x) => x.a === a)!.label;
      setBanner({ kind: 'success', title: `${label}: done for ${skillId} ${v}.`, details: out });
      setAction(null);
      if (a === 'remove') {
        navigate('/skills');
        return;
      }
      reload();
    } catch (e) {
      removing.current = false;
      if (a === 'remove' && !force && e instanceof ApiError && e.code === 'skill_referenced_by_hook') {
        // The dialog stays open: it names the bindings and offers to
        // disable them in the same change.
        let bindings: HookBinding[] = [];
        try {
          bindings = ((await api.hooks()).bindings ?? []).filter((b) => b.enabled && b.plugin_id === skillId);
        } catch {
          // The daemon's message names them too.
        }
        setRefs({ message: e.message, bindings });
        return;
      }
      setAction(null);
      setRefs(null);
      setBanner(errorBanner(`${ACTIONS.find((x) => x.a === a)!.label} failed`, e));
    }
  };

  const allVersions = versions.data?.entries ?? [];
  const update = (outdated.data?.skills ?? []).find((o) => o.skill_id === skillId);

  return (
    <>
      <div className="page-head">
        <div>
          <p className="crumbs">
            <Link to="/skills">Skills</Link> / {skillId}
          </p>
          <h1 data-testid="skill-title">
            {inv.skill_name || skillId} <span className="muted">{inv.version}</span>
          </h1>
          <p>
            <code>{skillId}</code> by {inv.publisher} · status <Badge value={inv.status} /> · trust {inv.trust_decision || '—'} ·{' '}
            {inv.eligibility.eligible ? 'eligible' : `not eligible (${inv.eligibility.reasons.join('; ')})`}
          </p>
        </div>
        {allVersions.length > 1 ? (
          <div className="field">
            <label htmlFor="version">Version</label>
            <select
              id="version"
              value={inv.version}
              onChange={(e) => navigate(`/skills/${encodeURIComponent(skillId)}?version=${encodeURIComponent(e.target.value)}`)}
            >
              {allVersions.map((x) => (
                <option key={x.version} value={x.version}>
                  {x.version}
                  {x.current ? ' (current)' : ''}
                </option>
              ))}
            </select>
          </div>
        ) : null}
      </div>
      <div className="toolbar" role="group" aria-label="Actions">
        {ACTIONS.filter((x) => availableActions(inv).includes(x.a)).map((x) => (
          <button key={x.a} type="button" className={x.danger ? 'danger-outline' : 'secondary'} onClick={() => open(x.a)} data-testid={`action-${x.a}`}>
            {x.label}
          </button>
        ))}
      </div>
      <Banner banner={banner} onClose={() => setBanner(null)} />
      {update?.outdated && inv.current ? (
        <p className="card" data-testid="skill-update">
          <UpdateAvailable skill={update} onReview={setUpdating} />
        </p>
      ) : null}
      {updating ? (
        <UpdateDialog
          skill={updating}
          onClose={() => setUpdating(null)}
          onDone={(r, err) => {
            setUpdating(null);
            if (r) setBanner({ kind: 'success', title: `Updated ${r.skill_id} from ${r.from_version} to ${r.to_version}.`, details: r });
            else setBanner(errorBanner(`Updating ${skillId} failed`, err));
            if (r?.updated && version) navigate(`/skills/${encodeURIComponent(skillId)}`);
            reload();
          }}
        />
      ) : null}

      <Section title="Status" id="status">
        <dl className="kv">
          <dt>Status</dt>
          <dd data-testid="skill-status">{inv.status}</dd>
          <dt>Runtime status</dt>
          <dd>
            {inv.runtime_status.status} ({inv.runtime_status.quarantine_status}){inv.runtime_status.reason ? `: ${inv.runtime_status.reason}` : ''}
            {inv.runtime_status.operator_principal ? ` by ${inv.runtime_status.operator_principal}` : ''}
          </dd>
          <dt>Installed</dt>
          <dd>{time(inv.installed_at_unix_ms)}</dd>
          <dt>Source</dt>
          <dd>
            {inv.source.kind} {inv.source.reference}
          </dd>
          <dt>Artifact SHA-256</dt>
          <dd>
            <code className="wrap">{inv.artifact_sha256}</code>
          </dd>
          <dt>Signing key</dt>
          <dd>
            <code className="wrap">{inv.signature_key_id || '—'}</code>
          </dd>
          <dt>Missing secrets</dt>
          <dd>{inv.missing_secrets.length ? inv.missing_secrets.map((s) => `${s.scope}/${s.key}`).join(', ') : 'none'}</dd>
          <dt>Missing config</dt>
          <dd data-testid="skill-missing-config">{inv.missing_config?.length ? inv.missing_config.join(', ') : 'none'}</dd>
        </dl>
      </Section>

      <Section title="Config" id="config">
        <ConfigSection skillId={skillId} onChanged={reload} />
      </Section>

      <Section title="Tools" id="tools">
        {tools.length === 0 ? <p className="muted">The manifest lists no tools.</p> : null}
        {tools.map((t) => (
          <article key={t.id} className="tool" data-testid={`tool-${t.id}`}>
            <h3>
              {t.name} <code>{t.id}</code>
            </h3>
            <p>{t.description}</p>
            <p className="muted">
              {t.risk?.requires_approval ? 'Requires approval. ' : ''}
              {t.risk?.default_sensitive ? 'Sensitive by default.' : ''}
            </p>
            {t.hooks_only ? (
              <p className="muted" data-testid={`hooks-only-${t.id}`}>
                For hooks only: events call it; it is not offered to run here or to MCP clients.
              </p>
            ) : (
              <p>
                <Link className="button" to={`/skills/${encodeURIComponent(skillId)}/tools/${encodeURIComponent(t.id)}`} data-testid={`run-${t.id}`}>
                  Run {t.name}
                </Link>
              </p>
            )}
            <details>
              <summary>Input schema</summary>
              <JsonView value={t.input_schema ?? null} />
            </details>
            <details>
              <summary>Output schema</summary>
              <JsonView value={t.output_schema ?? null} />
            </details>
          </article>
        ))}
      </Section>

      <Section title="Capabilities" id="capabilities">
        <div className="table-wrap" tabIndex={0}>
          <table className="data">
            <caption>Requested by the manifest and granted by policy</caption>
            <thead>
              <tr>
                <th scope="col">Capability</th>
                <th scope="col">Requested</th>
                <th scope="col">Granted</th>
              </tr>
            </thead>
            <tbody>
              {capabilityRows(d.manifest?.capabilities, d.grants).map((r) => (
                <tr key={r.name}>
                  <th scope="row">{r.name}</th>
                  <td>
                    <List items={r.requested} />
                  </td>
                  <td>
                    <List items={r.granted} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {isObj(d.manifest?.capabilities) && isObj(d.manifest.capabilities.quotas) ? (
          <p>
            Quotas:{' '}
            {Object.entries(d.manifest.capabilities.quotas)
              .map(([k, v]) => `${k} ${String(v)}`)
              .join(', ')}
          </p>
        ) : null}
      </Section>

      <Section title="Audit report" id="audit">
        <AuditSection report={d.audit_report} />
      </Section>

      <Section title="Status history" id="history">
        <div className="table-wrap" tabIndex={0}>
          <table className="data" data-testid="history">
            <caption>{history.length} event{history.length === 1 ? '' : 's'}</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Version</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Principal</th>
              </tr>
            </thead>
            <tbody>
              {[...history].reverse().map((h) => (
                <tr key={h.id} data-testid="history-row" data-kind={h.kind}>
                  <th scope="row">
                    <time dateTime={h.at}>{time(h.at)}</time>
                  </th>
                  <td>{h.kind}</td>
                  <td>{h.version || '—'}</td>
                  <td>{h.status ? <Badge value={h.status} /> : '—'}</td>
                  <td className="wrap">{h.reason || '—'}</td>
                  <td>{h.operator_principal || '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Section>

      <Section title="Sidecar" id="sidecar">
        {cars.length === 0 ? <p className="muted">No sidecar is running for this skill.</p> : null}
        {cars.map((s) => (
          <dl className="kv" key={s.version} data-testid="sidecar">
            <dt>Version</dt>
            <dd>{s.version}</dd>
            <dt>State</dt>
            <dd>
              <Badge value={s.status} /> {s.pid ? `pid ${s.pid}` : ''}
            </dd>
            <dt>Restarts / crashes</dt>
            <dd>
              {s.restarts} / {s.crashes}
            </dd>
            <dt>In flight / queued</dt>
            <dd>
              {s.in_flight} / {s.queued}
            </dd>
            <dt>Last used</dt>
            <dd>{time(s.last_used)}</dd>
            <dt>Compile cache hit</dt>
            <dd>{s.cache_hit ? 'yes' : 'no'}</dd>
            <dt>Last error</dt>
            <dd className="wrap">{s.last_error || '—'}</dd>
          </dl>
        ))}
      </Section>

      <Section title="Metrics" id="metrics">
        <MetricsSection skillId={skillId} refresh={refresh} />
      </Section>

      <Section title="Live events" id="feed">
        <LiveFeed skillId={skillId} after={lastHistoryId || undefined} onEvent={reload} />
      </Section>

      <Section title="Manifest and artifact" id="manifest">
        <details>
          <summary>Manifest</summary>
          <JsonView value={d.manifest} testId="manifest-json" />
        </details>
        <details>
          <summary>Signature</summary>
          <JsonView value={d.signature ?? null} />
        </details>
        <details>
          <summary>Artifact entries ({d.artifact_entries.length})</summary>
          <ul className="plain">
            {d.artifact_entries.map((e) => (
              <li key={e.path}>
                <code>{e.path}</code> {e.bytes} bytes <code className="muted">{e.sha256.slice(0, 16)}…</code>
              </li>
            ))}
          </ul>
        </details>
        {d.artifact_error ? (
          <p className="field-error">
            {d.artifact_error_code}: {d.artifact_error}
          </p>
        ) : null}
      </Section>

      {action ? (
        <ConfirmDialog
          title={`${ACTIONS.find((x) => x.a === action)!.label} ${skillId} ${inv.version}?`}
          confirmLabel={action === 'remove' && refs ? 'Remove and disable those hooks' : ACTIONS.find((x) => x.a === action)!.label}
          danger={ACTIONS.find((x) => x.a === action)!.danger}
          canConfirm={action !== 'quarantine' || reason.trim() !== ''}
          onClose={() => {
            setAction(null);
            setRefs(null);
          }}
          onConfirm={() => run(action, action === 'remove' && refs !== null)}
        >
          {action === 'verify' ? <p>Checks the installed artifact’s signature against the trust store again. Nothing changes.</p> : null}
          {action === 'audit' ? <p>Runs the static security audit on the installed artifact again and records the report.</p> : null}
          {action === 'remove' ? (
            <>
              <p>Removes this version. Its sidecar stops.</p>
              {refs ? (
                <div className="banner banner-error" role="alert" data-testid="remove-hook-refs">
                  <div className="banner-body">
                    <p>
                      <strong>Not removed:</strong> this is the last version of <code>{skillId}</code>, and enabled hook bindings run it.
                    </p>
                    {refs.bindings.length > 0 ? (
                      <ul aria-label="Enabled hook bindings that run this skill">
                        {refs.bindings.map((b) => (
                          <li key={b.hook_id} data-testid="remove-hook-ref" data-hook-id={b.hook_id}>
                            <code>{b.hook_id}</code> on {b.event}
                            {b.operator?.display_name ? ` (${b.operator.display_name})` : ''}
                          </li>
                        ))}
                      </ul>
                    ) : (
                      <p>{refs.message}</p>
                    )}
                    <p>
                      “Remove and disable those hooks” disables them in the same change (they stay on the <Link to="/hooks">Hooks</Link> page, to enable
                      again later); Cancel keeps the skill.
                    </p>
                  </div>
                </div>
              ) : null}
              <label className="check" htmlFor="purge">
                <input id="purge" type="checkbox" checked={purge} onChange={(e) => setPurge(e.target.checked)} data-testid="confirm-purge" /> Also delete the
                skill’s stored data
              </label>
            </>
          ) : null}
          {action === 'enable' && (inv.status === 'quarantined' || inv.runtime_status.quarantine_status === 'quarantined') ? (
            <label className="check" htmlFor="override">
              <input id="override" type="checkbox" checked={override} onChange={(e) => setOverride(e.target.checked)} data-testid="confirm-override" /> Override
              a quarantine (an operator decision, recorded with the reason)
            </label>
          ) : null}
          {action === 'quarantine' || action === 'enable' || action === 'disable' ? (
            <div className="field">
              <label htmlFor="reason">
                Reason{action === 'quarantine' ? <span aria-hidden="true"> *</span> : null}
                {action === 'quarantine' ? <span className="visually-hidden"> (required)</span> : null}
              </label>
              <textarea
                id="reason"
                data-autofocus
                rows={2}
                value={reason}
                required={action === 'quarantine'}
                aria-describedby="reason-hint"
                onChange={(e) => setReason(e.target.value)}
                data-testid="confirm-reason"
              />
              <small id="reason-hint" className="hint">
                Recorded in the status history{action === 'quarantine' ? '; required' : ''}.
              </small>
            </div>
          ) : null}
        </ConfirmDialog>
      ) : null}
    </>
  );
}
