// @vitest-environment jsdom
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { InstallResult, OutdatedSkill, UpdateResult } from '../api/types';
import { RouterProvider } from '../router';
import { InstallPage } from './Install';
import { SkillsPage } from './Skills';
import { diffLines, emptySourceForm, sourceRefOf, UpdateAvailable, UpdateDialog, type SourceForm } from './registry';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let host: HTMLDivElement;
let root: Root;
beforeEach(() => {
  host = document.createElement('div');
  document.body.appendChild(host);
  root = createRoot(host);
});
afterEach(() => {
  act(() => root.unmount());
  host.remove();
  vi.unstubAllGlobals();
});

const $ = <T extends Element = HTMLElement>(testId: string) => host.querySelector<T & HTMLElement>(`[data-testid="${testId}"]`)!;
const has = (testId: string) => host.querySelector(`[data-testid="${testId}"]`) !== null;

function type(el: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, value: string) {
  const proto = el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value')!.set!.call(el, value);
  el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? 'change' : 'input', { bubbles: true }));
}

/** The requests the page sent, answered in turn by the replies given. */
function daemon(...replies: [number, unknown][]) {
  const sent: { method: string; url: string; body: unknown }[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      sent.push({ method: init.method ?? 'GET', url, body: init.body ? JSON.parse(String(init.body)) : undefined });
      const [status, body] = replies[Math.min(sent.length, replies.length) - 1];
      return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
    }),
  );
  return sent;
}

const grants = { http_hosts: ['api.example.com'], secret_keys: ['skill:acme.echo/token'], storage_prefixes: ['cache/'], channels: ['alerts'] };

function result(over: Partial<InstallResult> = {}): InstallResult {
  return {
    event_kind: 'skill.installed',
    skill_id: 'acme.echo',
    version: '1.0.0',
    publisher: 'acme',
    artifact_sha256: 'ab'.repeat(32),
    signature_key_id: 'key-1234',
    trust_decision: 'tofu_newly_pinned',
    source: { kind: 'local_registry', reference: '/srv/reg' },
    installed: false,
    status: 'active',
    reasons: [],
    current: true,
    capability_diff: [],
    escalation: {},
    tool_count: 1,
    grants,
    policy: { limits: { fuel: 1000000, max_memory_bytes: 16 << 20, wall_clock_ns: 2e9 } },
    ...over,
  };
}

const form = (over: Partial<SourceForm>): SourceForm => ({ ...emptySourceForm, ...over });

describe('sourceRefOf', () => {
  const digest = 'a'.repeat(64);
  it.each([
    ['an OCI tag', form({ oci: ' oci://127.0.0.1:5000/skills/echo:1.0.0 ' }), { ref: { source: 'oci://127.0.0.1:5000/skills/echo:1.0.0' } }],
    ['an OCI digest over plain HTTP', form({ oci: `oci://localhost:5000/a/b@sha256:${digest}`, plainHttp: true }), { ref: { source: `oci://localhost:5000/a/b@sha256:${digest}`, plain_http: true } }],
    ['an index URL with a version and a CA', form({ kind: 'url', url: 'https://reg.example/index.json', skillId: 'acme.echo', version: '1.2.0', caCert: '-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----' }), {
      ref: { registry_url: 'https://reg.example/index.json', skill_id: 'acme.echo', version: '1.2.0', registry_ca_cert: '-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----\n' },
    }],
    ['an index directory, newest version', form({ kind: 'dir', dir: '/srv/reg', skillId: 'acme.echo' }), { ref: { registry_dir: '/srv/reg', skill_id: 'acme.echo' } }],
    ['no OCI reference', form({}), { errors: { oci: 'Give an OCI reference.' } }],
    ['an OCI reference without tag or digest', form({ oci: 'oci://reg/skills/echo' }), { errors: { oci: expect.stringContaining('oci://REGISTRY/REPOSITORY:TAG') } }],
    ['a short digest', form({ oci: 'oci://reg/a@sha256:abc' }), { errors: { oci: expect.stringContaining('64 lower-case hex') } }],
    ['an http index URL', form({ kind: 'url', url: 'http://reg.example/index.json', skillId: 'acme.echo' }), { errors: { url: 'The index URL must be an https:// URL.' } }],
    ['a relative directory, no skill, a bad version', form({ kind: 'dir', dir: 'reg', version: 'latest' }), {
      errors: { dir: 'The directory must be an absolute path.', skillId: 'Give the skill id.', version: expect.stringContaining('MAJOR.MINOR.PATCH') },
    }],
    ['a CA that is not PEM', form({ kind: 'url', url: 'https://r/i.json', skillId: 'a', caCert: 'hello' }), { errors: { caCert: expect.stringContaining('PEM') } }],
  ])('%s', (_, f, want) => {
    expect(sourceRefOf(f)).toEqual(want);
  });
});

describe('diffLines', () => {
  it('keeps the daemon’s lines, else writes them from the escalation', () => {
    expect(diffLines(['+ http host a'], { http_hosts: ['b'] })).toEqual(['+ http host a']);
    expect(diffLines(null, { http_hosts: ['api.example.com'], secret_keys: ['s/k'], http_ports: [8443], allow_private: true, raised: [{ name: 'fuel', old: 1, new: 2 }] })).toEqual([
      '+ http host api.example.com',
      '+ secret s/k',
      '+ http port 8443',
      '+ http private addresses allowed',
      '+ fuel 1 -> 2',
    ]);
    expect(diffLines(null, undefined)).toEqual([]);
  });
});

function renderInstall() {
  act(() =>
    root.render(
      <RouterProvider>
        <InstallPage />
      </RouterProvider>,
    ),
  );
  act(() => $('install-mode-registry').click());
}

describe('install from a registry', () => {
  it('dry-runs first, shows the skill, signer and grants, then installs with the options ticked', async () => {
    const sent = daemon([200, result()], [201, result({ installed: true, trust_decision: 'tofu_newly_pinned' })]);
    renderInstall();
    act(() => type($<HTMLSelectElement>('src-kind'), 'dir'));
    act(() => type($<HTMLInputElement>('src-dir'), '/srv/reg'));
    act(() => type($<HTMLInputElement>('src-skillId'), 'acme.echo'));
    await act(async () => $('registry-check').click());
    expect(sent).toEqual([
      { method: 'POST', url: '/v1/skills', body: { registry_dir: '/srv/reg', skill_id: 'acme.echo', allow_tofu: false, accept_capabilities: false, force: false, dry_run: true } },
    ]);
    expect($('preview-skill').textContent).toBe('acme.echo');
    expect($('preview-version').textContent).toBe('1.0.0');
    expect($('preview-publisher').textContent).toBe('acme');
    expect($('preview-key').textContent).toBe('key-1234');
    expect($('preview-trust').textContent).toBe('tofu_newly_pinned');
    const rows = [...$('preview-grants').querySelectorAll('tr')].map((r) => r.textContent);
    expect(rows).toEqual([
      'HTTP hostsapi.example.com',
      'Secretsskill:acme.echo/token',
      'Storage prefixescache/',
      'Channelsalerts',
      'Quotasfuel 1000000, memory 16 MiB, wall clock 2000 ms',
    ]);
    expect(has('capability-diff')).toBe(false); // a first install has no diff

    act(() => $('flag-allow_tofu').click());
    await act(async () => $('registry-install').click());
    expect(sent[1].body).toEqual({ registry_dir: '/srv/reg', skill_id: 'acme.echo', allow_tofu: true, accept_capabilities: false, force: false, dry_run: false });
    expect($('banner').getAttribute('data-kind')).toBe('success');
    expect($('banner-title').textContent).toBe('Installed from the registry as acme.echo 1.0.0.');
    expect(has('install-preview')).toBe(false);
  });

  it('shows an upgrade’s refused escalation with its diff and installs only once it is accepted', async () => {
    const refused = result({ version: '1.1.0', previous_version: '1.0.0', capability_diff: ['+ http host new.example.com'], escalation: { http_hosts: ['new.example.com'] } });
    const sent = daemon([409, { error: { code: 'capability_escalation', message: 'new version escalates capabilities: + http host new.example.com' }, details: refused }], [201, { ...refused, installed: true }]);
    renderInstall();
    act(() => type($<HTMLInputElement>('src-oci'), 'oci://127.0.0.1:5000/acme/echo:1.1.0'));
    act(() => $('src-plain-http').click());
    await act(async () => $('registry-check').click());
    expect(sent[0].body).toEqual({ source: 'oci://127.0.0.1:5000/acme/echo:1.1.0', plain_http: true, allow_tofu: false, accept_capabilities: false, force: false, dry_run: true });
    expect($('preview-version').textContent).toBe('1.1.0 (installed: 1.0.0)');
    expect([...host.querySelectorAll('[data-testid="capability-diff-line"]')].map((l) => l.textContent)).toEqual(['+ http host new.example.com']);
    expect(has('registry-escalation')).toBe(true);
    expect($<HTMLButtonElement>('registry-install').disabled).toBe(true);
    act(() => $('flag-accept_capabilities').click());
    expect($<HTMLButtonElement>('registry-install').disabled).toBe(false);
    await act(async () => $('registry-install').click());
    expect(sent[1].body).toMatchObject({ source: 'oci://127.0.0.1:5000/acme/echo:1.1.0', accept_capabilities: true, dry_run: false });
  });

  it('shows a refusal’s code and message, and checks nothing while the form is wrong', async () => {
    const sent = daemon([403, { error: { code: 'untrusted_publisher', message: 'publisher acme is not trusted' } }]);
    renderInstall();
    await act(async () => $('registry-check').click());
    expect(sent).toHaveLength(0);
    expect($('src-oci-error').textContent).toBe('Give an OCI reference.');
    expect($('src-oci').getAttribute('aria-invalid')).toBe('true');
    act(() => type($<HTMLInputElement>('src-oci'), 'oci://reg.example/acme/echo:1.0.0'));
    await act(async () => $('registry-check').click());
    expect(sent).toHaveLength(1);
    expect($('registry-check-error').textContent).toContain('untrusted_publisher: publisher acme is not trusted');
    expect(has('install-preview')).toBe(false);
  });

  it('drops the preview when the source changes', async () => {
    daemon([200, result()]);
    renderInstall();
    act(() => type($<HTMLInputElement>('src-oci'), 'oci://reg.example/acme/echo:1.0.0'));
    await act(async () => $('registry-check').click());
    expect(has('install-preview')).toBe(true);
    act(() => type($<HTMLInputElement>('src-oci'), 'oci://reg.example/acme/echo:2.0.0'));
    expect(has('install-preview')).toBe(false);
  });
});

const outdated: OutdatedSkill = { skill_id: 'acme.echo', current_version: '1.0.0', latest_version: '1.1.0', outdated: true, source: { kind: 'local_registry', reference: '/srv/reg' } };

function plan(over: Partial<UpdateResult> = {}): UpdateResult {
  return { skill_id: 'acme.echo', from_version: '1.0.0', to_version: '1.1.0', updated: false, dry_run: true, source: { kind: 'local_registry', reference: '/srv/reg' }, capability_diff: [], escalation: {}, ...over };
}

describe('update', () => {
  it('marks an outdated skill with its versions, an unreadable source with its code, and a current one as up to date', () => {
    const seen: OutdatedSkill[] = [];
    act(() =>
      root.render(
        <>
          <UpdateAvailable skill={outdated} onReview={(s) => seen.push(s)} />
          <UpdateAvailable skill={{ ...outdated, skill_id: 'b', outdated: false, latest_version: undefined, error: 'index unreachable', code: 'not_published' }} onReview={() => {}} />
          <UpdateAvailable skill={{ ...outdated, skill_id: 'c', outdated: false }} onReview={() => {}} />
          <UpdateAvailable skill={undefined} onReview={() => {}} />
        </>,
      ),
    );
    expect($('update-available-acme.echo').textContent).toContain('1.0.0 → 1.1.0');
    act(() => $('update-acme.echo').click());
    expect(seen).toEqual([outdated]);
    expect($('update-unknown-b').textContent).toBe('source unreadable (not_published)');
    expect(host.textContent).toContain('up to date');
  });

  it('shows a refused escalation’s diff and confirms only with the capabilities accepted', async () => {
    const refused = plan({ capability_diff: ['+ http host new.example.com', '+ fuel 1 -> 2'] });
    const sent = daemon([409, { error: { code: 'capability_escalation', message: 'escalates' }, details: refused }], [200, { ...refused, updated: true, dry_run: false }]);
    const done = vi.fn();
    act(() => root.render(<UpdateDialog skill={outdated} onClose={() => {}} onDone={done} />));
    await act(async () => {});
    expect(sent[0]).toEqual({ method: 'POST', url: '/v1/skills/acme.echo/update', body: { version: '1.1.0', dry_run: true, accept_capabilities: false, allow_tofu: false } });
    expect($('update-versions').textContent).toBe('1.0.0 → 1.1.0');
    expect([...host.querySelectorAll('[data-testid="capability-diff-line"]')].map((l) => l.textContent)).toEqual(['+ http host new.example.com', '+ fuel 1 -> 2']);
    expect($<HTMLButtonElement>('confirm-ok').disabled).toBe(true);
    act(() => $('update-accept').click());
    await act(async () => $('confirm-ok').click());
    expect(sent[1].body).toEqual({ version: '1.1.0', dry_run: false, accept_capabilities: true, allow_tofu: false });
    expect(done).toHaveBeenCalledWith({ ...refused, updated: true, dry_run: false });
  });

  it('updates without accepting anything when nothing new is granted', async () => {
    const sent = daemon([200, plan()], [200, plan({ updated: true, dry_run: false })]);
    const done = vi.fn();
    act(() => root.render(<UpdateDialog skill={outdated} onClose={() => {}} onDone={done} />));
    await act(async () => {});
    expect($('capability-diff').getAttribute('data-empty')).toBe('true');
    expect(has('update-accept')).toBe(false);
    await act(async () => $('confirm-ok').click());
    expect(sent[1].body).toEqual({ version: '1.1.0', dry_run: false, accept_capabilities: false, allow_tofu: false });
    expect(done).toHaveBeenCalledOnce();
  });

  it('shows a failed check with its code and cannot be confirmed', async () => {
    daemon([502, { error: { code: 'registry_unreachable', message: 'dial tcp: refused' } }]);
    act(() => root.render(<UpdateDialog skill={outdated} onClose={() => {}} onDone={() => {}} />));
    await act(async () => {});
    expect($('update-error').textContent).toContain('registry_unreachable: dial tcp: refused');
    expect($<HTMLButtonElement>('confirm-ok').disabled).toBe(true);
  });
});

describe('skills list', () => {
  it('asks for the available updates and marks the current version of an outdated skill', async () => {
    const listing = (version: string, current: boolean) => ({
      skill_id: 'acme.echo', version, publisher: 'acme', current, status: 'active', trust_decision: 'tofu_pinned', skill_name: 'Echo',
      runtime_status: { status: 'active', source: '', quarantine_status: 'none' }, source: { kind: 'local_registry', reference: '/srv/reg' },
    });
    const urls: string[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) => {
        urls.push(url);
        const body = url.startsWith('/v1/skills/outdated')
          ? { skills: [outdated] }
          : url.startsWith('/v1/sidecars')
            ? { sidecars: [] }
            : { skills_root: '/s', count: 2, entries: [listing('1.0.0', true), listing('0.9.0', false)] };
        return new Response(JSON.stringify(body), { status: 200 });
      }),
    );
    await act(async () =>
      root.render(
        <RouterProvider>
          <SkillsPage />
        </RouterProvider>,
      ),
    );
    expect(urls).toContain('/v1/skills/outdated');
    expect(host.querySelectorAll('[data-testid="update-available-acme.echo"]')).toHaveLength(1);
    expect($('update-available-acme.echo').closest('tr')?.textContent).toContain('1.0.0 (current)');
    await act(async () => $('update-acme.echo').click());
    expect(has('confirm-dialog')).toBe(true);
    expect(urls.at(-1)).toBe('/v1/skills/acme.echo/update');
  });
});
