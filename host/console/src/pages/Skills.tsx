import { useMemo, useState } from 'react';
import { api } from '../api/client';
import type { Listing, OutdatedSkill, SidecarState } from '../api/types';
import { Badge, Banner, ConfirmDialog, errorBanner, LoadError, useLoad, type BannerState } from '../components/common';
import { Link } from '../router';
import { UpdateAvailable, UpdateDialog } from './registry';

export interface SkillFilter {
  text: string;
  status: string;
  publisher: string;
}

/** The listings that match the filter (text matches id, name and publisher). */
export function filterSkills(entries: Listing[], f: SkillFilter): Listing[] {
  const t = f.text.trim().toLowerCase();
  return entries.filter(
    (e) =>
      (!t || e.skill_id.toLowerCase().includes(t) || (e.skill_name ?? '').toLowerCase().includes(t) || e.publisher.toLowerCase().includes(t)) &&
      (!f.status || e.status === f.status) &&
      (!f.publisher || e.publisher === f.publisher),
  );
}

export function lastError(sidecars: SidecarState[], e: Listing): string {
  return sidecars.find((s) => s.skill_id === e.skill_id && s.version === e.version)?.last_error ?? '';
}

export function SkillsPage() {
  const [currentOnly, setCurrentOnly] = useState(true);
  const [filter, setFilter] = useState<SkillFilter>({ text: '', status: '', publisher: '' });
  const [banner, setBanner] = useState<BannerState | null>(null);
  const [confirmReaudit, setConfirmReaudit] = useState(false);
  const list = useLoad((s) => api.skills({ current_only: currentOnly }, s), [currentOnly]);
  const sidecars = useLoad((s) => api.sidecars(s), []);
  const outdated = useLoad((s) => api.outdated(undefined, s), []);
  const [updating, setUpdating] = useState<OutdatedSkill | null>(null);

  const entries = list.data?.entries ?? [];
  const statuses = useMemo(() => [...new Set(entries.map((e) => e.status))].sort(), [entries]);
  const publishers = useMemo(() => [...new Set(entries.map((e) => e.publisher))].sort(), [entries]);
  const shown = filterSkills(entries, filter);
  const cars = sidecars.data?.sidecars ?? [];
  const updates = new Map((outdated.data?.skills ?? []).map((o) => [o.skill_id, o]));

  return (
    <>
      <div className="page-head">
        <h1>Skills</h1>
        <div className="toolbar">
          <button
            type="button"
            className="secondary"
            onClick={() => {
              list.reload();
              sidecars.reload();
              outdated.reload();
            }}
            data-testid="skills-refresh"
          >
            Refresh
          </button>
          <button type="button" className="secondary" onClick={() => setConfirmReaudit(true)} data-testid="reaudit">
            Re-audit all
          </button>
        </div>
      </div>
      <Banner banner={banner} onClose={() => setBanner(null)} />
      <form className="filters" role="search" aria-label="Filter skills" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="f-text">Search</label>
          <input id="f-text" type="search" value={filter.text} onChange={(e) => setFilter({ ...filter, text: e.target.value })} data-testid="filter-text" />
        </div>
        <div className="field">
          <label htmlFor="f-status">Status</label>
          <select id="f-status" value={filter.status} onChange={(e) => setFilter({ ...filter, status: e.target.value })} data-testid="filter-status">
            <option value="">Any</option>
            {statuses.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="f-pub">Publisher</label>
          <select id="f-pub" value={filter.publisher} onChange={(e) => setFilter({ ...filter, publisher: e.target.value })} data-testid="filter-publisher">
            <option value="">Any</option>
            {publishers.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </div>
        <div className="field field-checkbox">
          <label className="check" htmlFor="f-current">
            <input id="f-current" type="checkbox" checked={currentOnly} onChange={(e) => setCurrentOnly(e.target.checked)} data-testid="filter-current" /> Current
            versions only
          </label>
        </div>
      </form>
      {list.error ? <LoadError error={list.error} what="the skills" /> : null}
      {sidecars.error ? <LoadError error={sidecars.error} what="the sidecars" /> : null}
      {outdated.error ? <LoadError error={outdated.error} what="the available updates" /> : null}
      <div className="table-wrap" tabIndex={0}>
        <table className="data" data-testid="skills-table" aria-busy={list.loading}>
          <caption>
            {list.loading ? 'Loading…' : `${shown.length} of ${entries.length} installed version${entries.length === 1 ? '' : 's'}`}
          </caption>
          <thead>
            <tr>
              <th scope="col">Skill</th>
              <th scope="col">Version</th>
              <th scope="col">Publisher</th>
              <th scope="col">Status</th>
              <th scope="col">Trust decision</th>
              <th scope="col">Runtime status</th>
              <th scope="col">Last error</th>
              <th scope="col">Update</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((e) => (
              <tr key={`${e.skill_id}@${e.version}`} data-testid="skill-row" data-skill-id={e.skill_id}>
                <th scope="row">
                  <Link to={`/skills/${encodeURIComponent(e.skill_id)}${e.current ? '' : `?version=${encodeURIComponent(e.version)}`}`} data-testid={`skill-link-${e.skill_id}`}>
                    {e.skill_id}
                  </Link>
                  {e.skill_name ? <div className="muted">{e.skill_name}</div> : null}
                </th>
                <td>
                  {e.version}
                  {e.current ? <span className="muted"> (current)</span> : null}
                </td>
                <td>{e.publisher}</td>
                <td>
                  <Badge value={e.status} />
                </td>
                <td>{e.trust_decision || '—'}</td>
                <td>
                  <Badge value={e.runtime_status.quarantine_status === 'quarantined' ? 'quarantined' : e.runtime_status.status} />
                  {e.runtime_status.reason ? <div className="muted">{e.runtime_status.reason}</div> : null}
                </td>
                <td className="wrap">{lastError(cars, e) || '—'}</td>
                <td>{e.current ? <UpdateAvailable skill={updates.get(e.skill_id)} onReview={setUpdating} /> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {updating ? (
        <UpdateDialog
          skill={updating}
          onClose={() => setUpdating(null)}
          onDone={(r, err) => {
            setUpdating(null);
            if (r) setBanner({ kind: 'success', title: `Updated ${r.skill_id} from ${r.from_version} to ${r.to_version}.`, details: r });
            else setBanner(errorBanner(`Updating ${updating.skill_id} failed`, err));
            list.reload();
            outdated.reload();
          }}
        />
      ) : null}
      {confirmReaudit ? (
        <ConfirmDialog
          title="Re-audit every installed skill?"
          confirmLabel="Re-audit"
          onClose={() => setConfirmReaudit(false)}
          onConfirm={async () => {
            try {
              const r = await api.reaudit();
              setBanner({ kind: 'success', title: 'Re-audit finished.', details: r });
            } catch (e) {
              setBanner(errorBanner('Re-audit failed', e));
            }
            setConfirmReaudit(false);
            list.reload();
          }}
        >
          <p>Every current version is verified and audited again; a version that fails is quarantined.</p>
        </ConfirmDialog>
      ) : null}
    </>
  );
}
