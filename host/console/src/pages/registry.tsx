import { useEffect, useState } from 'react';
import { api, ApiError } from '../api/client';
import type { Escalation, Grants, InstallResult, Limits, OutdatedSkill, SourceRef, UpdateResult } from '../api/types';
import { Badge, ConfirmDialog, errorBanner, humanBytes } from '../components/common';

// The pieces of installing from a registry and updating: the source form's
// check, the view of a dry run's result (what the skill is, who signed it,
// what it is granted, what it gains over the installed version), and the
// update dialog (the diff first, then the confirm).

/** Where the operator says the artifact is: an OCI reference, or an entry of a registry index (by URL or by directory on the daemon's machine). */
export interface SourceForm {
  kind: 'oci' | 'url' | 'dir';
  oci: string;
  plainHttp: boolean;
  url: string;
  dir: string;
  skillId: string;
  version: string;
  caCert: string;
}

export const emptySourceForm: SourceForm = { kind: 'oci', oci: '', plainHttp: false, url: '', dir: '', skillId: '', version: '', caCert: '' };

export type SourceErrors = Partial<Record<'oci' | 'url' | 'dir' | 'skillId' | 'version' | 'caCert', string>>;

const OCI = /^oci:\/\/[^/\s@]+\/[^\s@:]+(?::[A-Za-z0-9_][A-Za-z0-9._-]{0,127}|@sha256:[0-9a-f]{64})$/;
const SKILL_ID = /^[a-z0-9][a-z0-9._-]*$/;
const VERSION = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?$/;

/**
 * The request body of the form (host.SourceRef), or what is wrong with it.
 * The daemon checks everything again; this catches what can be seen here.
 */
export function sourceRefOf(f: SourceForm): { ref: SourceRef } | { errors: SourceErrors } {
  const errors: SourceErrors = {};
  const ref: SourceRef = {};
  if (f.kind === 'oci') {
    const s = f.oci.trim();
    if (!s) errors.oci = 'Give an OCI reference.';
    else if (!OCI.test(s)) errors.oci = 'Write oci://REGISTRY/REPOSITORY:TAG or oci://REGISTRY/REPOSITORY@sha256:DIGEST (64 lower-case hex digits).';
    ref.source = s;
    if (f.plainHttp) ref.plain_http = true;
  } else {
    if (f.kind === 'url') {
      const s = f.url.trim();
      let u: URL | null = null;
      try {
        u = new URL(s);
      } catch {
        u = null;
      }
      if (!s) errors.url = 'Give the URL of the registry’s index.json.';
      else if (!u || u.protocol !== 'https:') errors.url = 'The index URL must be an https:// URL.';
      ref.registry_url = s;
      const ca = f.caCert.trim();
      if (ca) {
        if (!ca.includes('-----BEGIN CERTIFICATE-----')) errors.caCert = 'Paste PEM certificates (-----BEGIN CERTIFICATE-----).';
        ref.registry_ca_cert = ca + '\n';
      }
    } else {
      const s = f.dir.trim();
      if (!s) errors.dir = 'Give the registry directory (on the daemon’s machine).';
      else if (!s.startsWith('/')) errors.dir = 'The directory must be an absolute path.';
      ref.registry_dir = s;
    }
    const id = f.skillId.trim();
    if (!id) errors.skillId = 'Give the skill id.';
    else if (!SKILL_ID.test(id)) errors.skillId = 'A skill id is lower-case letters, digits, dots, dashes and underscores.';
    ref.skill_id = id;
    const v = f.version.trim();
    if (v && !VERSION.test(v)) errors.version = 'A version is MAJOR.MINOR.PATCH (empty: the newest).';
    if (v) ref.version = v;
  }
  return Object.keys(errors).length ? { errors } : { ref };
}

/** The lines of a capability diff, from the result's list or else its escalation (the same lines policy.Escalation.Lines writes). */
export function diffLines(lines: string[] | null | undefined, esc?: Escalation): string[] {
  if (lines && lines.length) return lines;
  if (!esc) return [];
  const out: string[] = [];
  const add = (what: string, xs?: (string | number)[]) => xs?.forEach((x) => out.push(`+ ${what} ${x}`));
  add('http host', esc.http_hosts);
  add('secret', esc.secret_keys);
  add('storage prefix', esc.storage_prefixes);
  add('storage writable', esc.storage_writable);
  add('channel', esc.channels);
  add('device capability', esc.device_capabilities);
  add('node capability', esc.node_capabilities);
  add('http scheme', esc.http_schemes);
  add('http port', esc.http_ports);
  if (esc.allow_private) out.push('+ http private addresses allowed');
  esc.raised?.forEach((r) => out.push(`+ ${r.name} ${r.old} -> ${r.new}`));
  return out;
}

export function CapabilityDiff({ lines }: { lines: string[] }) {
  if (lines.length === 0) {
    return (
      <p data-testid="capability-diff" data-empty="true">
        Nothing is granted beyond the installed version.
      </p>
    );
  }
  return (
    <ul className="diff" data-testid="capability-diff">
      {lines.map((l) => (
        <li key={l} data-testid="capability-diff-line">
          <code>{l}</code>
        </li>
      ))}
    </ul>
  );
}

const list = (xs: (string | number)[] | null | undefined) => (xs && xs.length ? xs.join(', ') : 'none');

function bytes(n: number | undefined): string {
  return n ? humanBytes(n) : '—';
}

/** The requested capabilities as rows: what the skill would be granted, and its quotas. */
export function grantRows(g: Grants | undefined, limits: Limits | undefined): [string, string][] {
  const rows: [string, string][] = [
    ['HTTP hosts', list(g?.http_hosts)],
    ['Secrets', list(g?.secret_keys) + (g?.secret_read ? ' (may read values)' : '')],
    ['Storage prefixes', list(g?.storage_prefixes) + (g?.storage_read_only?.length ? ` (read only: ${g.storage_read_only.join(', ')})` : '')],
    ['Channels', list(g?.channels)],
  ];
  if (g?.device_capabilities?.length) rows.push(['Device capabilities', list(g.device_capabilities)]);
  if (g?.node_capabilities?.length) rows.push(['Node capabilities', list(g.node_capabilities)]);
  if (limits) {
    rows.push([
      'Quotas',
      `fuel ${limits.fuel || '—'}, memory ${bytes(limits.max_memory_bytes)}, wall clock ${limits.wall_clock_ns ? `${limits.wall_clock_ns / 1e6} ms` : '—'}` +
        (limits.max_storage_bytes ? `, storage ${bytes(limits.max_storage_bytes)}` : ''),
    ]);
  }
  return rows;
}

/** What a dry run says the install would be: the skill, its signer, its grants and, for an upgrade, the capability diff. */
export function InstallPreview({ result }: { result: InstallResult }) {
  const upgrade = !!result.previous_version;
  const lines = diffLines(result.capability_diff, result.escalation);
  const reasons = result.reasons ?? [];
  return (
    <section className="card" aria-labelledby="preview-title" data-testid="install-preview">
      <h2 id="preview-title">
        {result.installed ? 'Installed' : 'Would install'} {result.skill_id} {result.version}
      </h2>
      <dl className="kv">
        <dt>Skill</dt>
        <dd data-testid="preview-skill">{result.skill_id}</dd>
        <dt>Version</dt>
        <dd data-testid="preview-version">
          {result.version}
          {upgrade ? ` (installed: ${result.previous_version})` : ''}
        </dd>
        <dt>Publisher</dt>
        <dd data-testid="preview-publisher">{result.publisher}</dd>
        <dt>Signing key</dt>
        <dd>
          <code className="wrap" data-testid="preview-key">
            {result.signature_key_id || '—'}
          </code>
        </dd>
        <dt>Trust decision</dt>
        <dd data-testid="preview-trust">
          <Badge value={result.trust_decision} />
        </dd>
        <dt>Source</dt>
        <dd>
          {result.source?.kind} <code className="wrap">{result.source?.reference}</code>
        </dd>
        <dt>Status after install</dt>
        <dd data-testid="preview-status">
          <Badge value={result.status} />
          {reasons.length ? ` ${reasons.join('; ')}` : ''}
        </dd>
      </dl>
      <div className="table-wrap" tabIndex={0}>
        <table className="data" data-testid="preview-grants">
          <caption>Requested capabilities, as policy grants them</caption>
          <tbody>
            {grantRows(result.grants, result.policy?.limits).map(([k, v]) => (
              <tr key={k}>
                <th scope="row">{k}</th>
                <td className="wrap">{v}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {upgrade ? (
        <>
          <h3>Beyond {result.previous_version}</h3>
          <CapabilityDiff lines={lines} />
        </>
      ) : null}
    </section>
  );
}

/** The InstallResult an escalation refusal carries in its details, if it does. */
export function refusedResult<T extends { capability_diff?: string[] | null }>(e: unknown, key: keyof T): T | null {
  if (!(e instanceof ApiError) || e.code !== 'capability_escalation') return null;
  const d = e.details as T | undefined;
  return d && typeof d === 'object' && key in d ? d : null;
}

/** An update's dialog: the dry run's version change and capability diff first, then the confirm. */
export function UpdateDialog({ skill, onClose, onDone }: { skill: OutdatedSkill; onClose: () => void; onDone: (r: UpdateResult | null, e?: unknown) => void }) {
  const [plan, setPlan] = useState<UpdateResult | null>(null);
  const [escalates, setEscalates] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [accept, setAccept] = useState(false);

  useEffect(() => {
    let live = true;
    api.update(skill.skill_id, { version: skill.latest_version, dry_run: true, accept_capabilities: false, allow_tofu: false }).then(
      (r) => {
        if (!live) return;
        setPlan(r);
        setEscalates(diffLines(r.capability_diff, r.escalation).length > 0);
      },
      (e) => {
        if (!live) return;
        const refused = refusedResult<UpdateResult>(e, 'to_version');
        if (refused) {
          setPlan(refused);
          setEscalates(true);
        } else setError(e);
      },
    );
    return () => {
      live = false;
    };
  }, [skill.skill_id, skill.latest_version]);

  const lines = plan ? diffLines(plan.capability_diff, plan.escalation) : [];
  const current = plan?.reason === 'already_current';
  const err = error ? errorBanner('The update check failed', error) : null;
  return (
    <ConfirmDialog
      title={`Update ${skill.skill_id}?`}
      confirmLabel="Update"
      canConfirm={!!plan && !current && (!escalates || accept)}
      onClose={onClose}
      onConfirm={async () => {
        if (!plan) return;
        try {
          const r = await api.update(skill.skill_id, { version: plan.to_version, dry_run: false, accept_capabilities: escalates && accept, allow_tofu: false });
          onDone(r);
        } catch (e) {
          onDone(null, e);
        }
      }}
    >
      {!plan && !err ? <p aria-busy="true">Checking {skill.latest_version ?? 'the newest version'}…</p> : null}
      {err ? (
        <div className="banner banner-error" role="alert" data-testid="update-error">
          <div className="banner-body">
            <strong>{err.title}</strong>
            <p>{err.message}</p>
          </div>
        </div>
      ) : null}
      {plan ? (
        <div data-testid="update-plan">
          <p data-testid="update-versions">
            {plan.from_version} → {plan.to_version}
            {current ? ' (already current)' : ''}
          </p>
          {plan.source?.reference ? (
            <p className="muted">
              From {plan.source.kind} <code className="wrap">{plan.source.reference}</code>
            </p>
          ) : null}
          <h3>New capabilities</h3>
          <CapabilityDiff lines={lines} />
          {escalates ? (
            <div className="field field-checkbox">
              <label className="check" htmlFor="update-accept">
                <input id="update-accept" type="checkbox" checked={accept} onChange={(e) => setAccept(e.target.checked)} data-testid="update-accept" data-autofocus /> Accept
                these capabilities
              </label>
            </div>
          ) : null}
        </div>
      ) : null}
    </ConfirmDialog>
  );
}

/** The "update available" mark of a skill, with the button that opens its dialog. */
export function UpdateAvailable({ skill, onReview }: { skill: OutdatedSkill | undefined; onReview: (s: OutdatedSkill) => void }) {
  if (!skill) return <>—</>;
  if (skill.error) {
    return (
      <span className="muted" title={skill.error} data-testid={`update-unknown-${skill.skill_id}`}>
        source unreadable ({skill.code || 'error'})
      </span>
    );
  }
  if (!skill.outdated) return <span className="muted">up to date</span>;
  return (
    <span data-testid={`update-available-${skill.skill_id}`}>
      <Badge value="update available" /> {skill.current_version} → {skill.latest_version}{' '}
      <button type="button" className="secondary small" onClick={() => onReview(skill)} data-testid={`update-${skill.skill_id}`}>
        Review update…
      </button>
    </span>
  );
}
