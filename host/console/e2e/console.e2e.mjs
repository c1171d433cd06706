// End-to-end test of the web console: Debian's Chromium, driven by
// playwright-core, against a real palyra-host serving the example skills
// (see scripts/console-e2e.sh, which starts one).
//
//   PALYRA_URL=http://127.0.0.1:PORT PALYRA_TOKEN=palyra_... node e2e/console.e2e.mjs
//
// It signs in, lists the skills, opens one, runs echo from the generated
// form, runs report and sees its table and chart, submits the report's
// A2UI form and sees the reply, quarantines and enables a skill, sees the
// quarantine on the events page, and sees this machine's node on the
// Cluster page. With PALYRA_E2E_REGISTRY (a local registry directory
// holding PALYRA_E2E_REGISTRY_SKILL 1.0.0) and PALYRA_E2E_PUBLISH_NEXT (a
// program that publishes 1.1.0 there, granted one more HTTP host), it also
// installs that skill from the registry (the dry run's preview, then the
// confirm), publishes 1.1.0, sees "update available" on the skills list,
// and takes the update after its capability diff. Each page is saved as a screenshot in $E2E_ARTIFACTS
// (default e2e/artifacts/). Any console error, page error or
// request to another host than the daemon fails the run.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const BASE = (process.env.PALYRA_URL ?? '').replace(/\/+$/, '');
const TOKEN = (process.env.PALYRA_TOKEN ?? '').trim();
const ARTIFACTS = resolve(process.env.E2E_ARTIFACTS || join(here, 'artifacts'));
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT = 20_000;
const REGISTRY = process.env.PALYRA_E2E_REGISTRY ?? '';
const PUBLISH_NEXT = process.env.PALYRA_E2E_PUBLISH_NEXT ?? '';
const REG_SKILL = process.env.PALYRA_E2E_REGISTRY_SKILL || 'palyra.registry_echo';

if (!BASE || !TOKEN) {
  console.error('console e2e: set PALYRA_URL and PALYRA_TOKEN');
  process.exit(2);
}
const origin = new URL(BASE).origin;
mkdirSync(ARTIFACTS, { recursive: true });

const started = performance.now();
const profile = mkdtempSync(join(tmpdir(), 'palyra-console-e2e-'));
const problems = [];
const screenshots = [];
let allowedErrors = null; // a RegExp of console errors a step expects

const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
  viewport: { width: 1280, height: 900 },
});
context.setDefaultTimeout(TIMEOUT);
context.on('request', (req) => {
  const url = req.url();
  if (url.startsWith('data:') || url.startsWith('blob:')) return;
  if (new URL(url).origin !== origin) problems.push(`request to another host: ${req.method()} ${url}`);
});
const page = context.pages()[0] ?? (await context.newPage());
page.on('console', (msg) => {
  if (msg.type() !== 'error') return;
  if (allowedErrors && allowedErrors.test(msg.text())) return;
  problems.push(`console error: ${msg.text()}`);
});
page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));

const tid = (id) => page.getByTestId(id);

/**
 * Basic accessibility checks of the page as it is: every form control has
 * a label, the landmarks are there, no inline style or handler, and text
 * has a contrast of at least 4.5:1 (3:1 for large text) with what is
 * behind it.
 */
async function checkA11y(name) {
  const issues = await page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
      if (!(el.labels?.length || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby'))) {
        out.push(`unlabelled ${el.tagName.toLowerCase()} ${el.id || el.getAttribute('data-testid') || ''}`);
      }
    }
    for (const sel of ['header', 'main']) if (!document.querySelector(sel)) out.push(`no <${sel}> landmark`);
    for (const el of document.querySelectorAll('[style]:not([style=""]), [onclick], [onload]')) out.push(`inline style or handler: ${el.outerHTML.slice(0, 120)}`);
    const rgb = (c) => (c.match(/[\d.]+/g) ?? []).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const bgOf = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const c = rgb(getComputedStyle(e).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const seen = new Set();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || seen.has(el) || !n.textContent.trim() || el.closest('svg, .visually-hidden, option')) continue;
      seen.add(el);
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const st = getComputedStyle(el);
      const fg = rgb(st.color);
      const l1 = lum(fg.slice(0, 3));
      const l2 = lum(bgOf(el));
      const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
      const size = parseFloat(st.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(st.fontWeight) >= 700);
      if (ratio < (large ? 3 : 4.5)) out.push(`contrast ${ratio.toFixed(2)}:1 for "${n.textContent.trim().slice(0, 40)}"`);
    }
    return out;
  });
  if (issues.length) problems.push(`${name}: accessibility: ${[...new Set(issues)].slice(0, 10).join('; ')}`);
}

async function shot(name) {
  await checkA11y(name);
  const file = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  screenshots.push(file);
}

async function expectText(locator, re, what) {
  await locator.first().waitFor();
  const deadline = Date.now() + TIMEOUT;
  let text = '';
  while (Date.now() < deadline) {
    text = (await locator.first().textContent()) ?? '';
    if (re.test(text)) return text;
    await page.waitForTimeout(100);
  }
  throw new Error(`${what}: ${JSON.stringify(text.slice(0, 300))} does not match ${re}`);
}

async function expectCount(locator, n, what) {
  const deadline = Date.now() + TIMEOUT;
  let c = 0;
  while (Date.now() < deadline) {
    c = await locator.count();
    if (c === n) return;
    await page.waitForTimeout(100);
  }
  throw new Error(`${what}: ${c}, want ${n}`);
}

/** The daemon's answer to a GET of the API, outside the browser. */
async function apiGet(path) {
  const res = await fetch(`${BASE}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Clicks a link inside the app (client-side navigation) and waits for the path. */
async function go(testId, path) {
  await tid(testId).first().click();
  await page.waitForURL((u) => u.pathname === path);
}

const steps = [
  [
    'a wrong token is refused',
    async () => {
      allowedErrors = /401|Unauthorized/i;
      await page.goto(`${BASE}/skills`);
      await page.waitForURL((u) => u.pathname === '/login');
      await tid('login-token').fill('palyra_wrong');
      await tid('login-submit').click();
      await expectText(tid('banner'), /unauthorized/i, 'the login banner');
      await shot('01-login');
      allowedErrors = null;
    },
  ],
  [
    'sign in and see the list',
    async () => {
      await tid('login-token').fill(TOKEN);
      await tid('login-submit').click();
      await page.waitForURL((u) => u.pathname === '/skills');
      for (const id of ['palyra.echo', 'palyra.report', 'palyra.kv_counter', 'palyra.event_log']) {
        await page.locator(`[data-testid="skill-row"][data-skill-id="${id}"]`).waitFor();
      }
      await tid('filter-text').fill('report');
      await expectCount(tid('skill-row'), 1, 'rows matching "report"');
      await tid('filter-text').fill('');
      await shot('02-skills');
    },
  ],
  [
    'open a skill',
    async () => {
      await go('skill-link-palyra.echo', '/skills/palyra.echo');
      await expectText(tid('skill-title'), /Echo/, 'the title');
      await tid('tool-palyra.echo').waitFor();
      await tid('audit-check').first().waitFor();
      await tid('history-row').first().waitFor();
      await tid('section-metrics').waitFor();
      await shot('03-skill-detail');
    },
  ],
  [
    'run echo from the generated form',
    async () => {
      await go('run-palyra.echo', '/skills/palyra.echo/tools/palyra.echo');
      await tid('field-text').fill('hello from the console');
      await tid('run-submit').click();
      await expectText(tid('result-json'), /"echo": "hello from the console"/, 'the echo result');
      await expectText(tid('exit-code'), /^0$/, 'the exit code');
      await shot('04-run-echo');
    },
  ],
  [
    'run report and see the table and the chart',
    async () => {
      await page.goto(`${BASE}/skills/palyra.report`);
      await go('run-palyra.report', '/skills/palyra.report/tools/palyra.report');
      const branch = tid('branch-root');
      if (await branch.count()) await branch.selectOption({ label: 'Report' });
      await tid('field-title').fill('Quarterly');
      await tid('add-rows').click();
      await tid('add-rows').click();
      await tid('field-rows.0.label').fill('alpha');
      await tid('field-rows.0.value').fill('3');
      await tid('field-rows.1.label').fill('beta');
      await tid('field-rows.1.value').fill('5');
      await tid('run-submit').click();
      const table = tid('a2ui-table');
      await expectCount(table.locator('tbody tr'), 2, 'table rows');
      await expectText(table, /alpha.*3.*beta.*5/s, 'the table');
      await tid('a2ui-chart').waitFor();
      await expectCount(tid('a2ui-chart').locator('svg[role="img"]'), 1, 'chart images');
      await expectCount(tid('chart-data').locator('tbody tr'), 2, 'chart data rows');
      await shot('05-run-report');
    },
  ],
  [
    'submit the A2UI form and see the reply',
    async () => {
      const form = tid('a2ui-form');
      await form.waitFor();
      await form.locator('input[type="text"]').first().fill('gamma');
      await form.locator('input[type="number"]').first().fill('7');
      const kind = form.locator('select');
      const hasKind = (await kind.count()) > 0;
      if (hasKind) await kind.first().selectOption('pie');
      await tid('a2ui-submit').click();
      const table = tid('a2ui-table');
      await expectCount(table.locator('tbody tr'), 3, 'table rows after the submit');
      await expectText(table, /gamma.*7/s, 'the new row');
      await expectCount(tid('chart-data').locator('tbody tr'), 3, 'chart points after the submit');
      if (hasKind) await page.locator('[data-testid="a2ui-chart"][data-kind="pie"]').waitFor();
      await expectText(tid('banner'), /sent/, 'the submit banner');
      await shot('06-a2ui-submit');
    },
  ],
  [
    'quarantine a skill',
    async () => {
      await go('nav-skills', '/skills');
      await go('skill-link-palyra.echo', '/skills/palyra.echo');
      await tid('action-quarantine').click();
      await tid('confirm-dialog').waitFor();
      await page.keyboard.press('Escape');
      await expectCount(tid('confirm-dialog'), 0, 'dialogs after Escape');
      await tid('action-quarantine').click();
      if (!(await tid('confirm-ok').isDisabled())) throw new Error('quarantine can be confirmed without a reason');
      await tid('confirm-reason').fill('e2e: checking the quarantine flow');
      await tid('confirm-ok').click();
      await expectText(tid('banner'), /Quarantine: done/, 'the result banner');
      await expectText(tid('skill-status'), /^quarantined$/, 'the status');
      await expectText(tid('history'), /e2e: checking the quarantine flow/, 'the status history');
      await shot('07-quarantined');
    },
  ],
  [
    'enable it again',
    async () => {
      await tid('action-enable').click();
      await tid('confirm-reason').fill('e2e: back to service');
      await tid('confirm-ok').click();
      await expectText(tid('banner'), /Enable: done/, 'the result banner');
      await expectText(tid('skill-status'), /^active$/, 'the status');
      await expectText(tid('live-feed'), /skill:(enabled|quarantined)/, 'the live feed');
      await shot('08-enabled');
    },
  ],
  [
    'the events page shows the quarantine',
    async () => {
      await go('nav-events', '/events');
      await page.locator('[data-testid="event-row"][data-kind="skill:quarantined"][data-skill-id="palyra.echo"]').first().waitFor();
      await page.locator('[data-testid="event-row"][data-kind="skill:enabled"][data-skill-id="palyra.echo"]').first().waitFor();
      await expectText(tid('events-status'), /open/, 'the stream status');
      await shot('09-events');
    },
  ],
  [
    'hooks and install pages',
    async () => {
      await go('nav-hooks', '/hooks');
      await page.locator('[data-testid="hook-row"][data-hook-id="event-log.quarantined"]').waitFor();
      await shot('10-hooks');
      await go('nav-install', '/install');
      await tid('install-form').waitFor();
      await shot('11-install');
    },
  ],
  [
    'the cluster page lists the node',
    async () => {
      await go('nav-cluster', '/cluster');
      // Not clustered: a cluster of one, this machine (the daemon's node
      // name is its host name), live, at a version, serving the skills
      // whose sidecars ran.
      const row = page.locator(`[data-testid="cluster-node"][data-node="${hostname()}"][data-live="true"]`);
      await row.waitFor();
      await expectCount(tid('cluster-node'), 1, 'nodes');
      await expectText(tid('cluster-summary'), /cluster of one/, 'the summary');
      await expectText(row, /this node.*live.*\d+\.\d+\.\d+.*palyra\.echo/s, 'the node row');
      await shot('12-cluster');
    },
  ],
  ...(REGISTRY
    ? [
        [
          'install from a registry: the dry run first, then the confirm',
          async () => {
            await go('nav-install', '/install');
            await tid('install-mode-registry').check();
            await tid('src-kind').selectOption('dir');
            await tid('src-dir').fill(REGISTRY);
            await tid('src-skillId').fill(REG_SKILL);
            await tid('registry-check').click();
            await tid('install-preview').waitFor();
            await expectText(tid('preview-skill'), new RegExp(`^${escapeRe(REG_SKILL)}$`), 'the previewed skill');
            await expectText(tid('preview-version'), /^1\.0\.0$/, 'the previewed version');
            await expectText(tid('preview-publisher'), /^palyra$/, 'the previewed publisher');
            await expectText(tid('preview-key'), /^[0-9A-Za-z:_+/=-]{8,}$/, 'the previewed key id');
            await expectText(tid('preview-trust'), /allowlisted|pinned/, 'the previewed trust decision');
            await expectText(tid('preview-grants'), /HTTP hosts\s*none/, 'the previewed grants');
            const before = await apiGet(`/v1/skills?skill_id=${encodeURIComponent(REG_SKILL)}`);
            if (before.count !== 0) throw new Error(`the dry run installed something: ${JSON.stringify(before.entries)}`);
            await shot('13-registry-preview');
            await tid('registry-install').click();
            await expectText(tid('banner'), /Installed from the registry as .* 1\.0\.0/, 'the install banner');
            const after = await apiGet(`/v1/skills?skill_id=${encodeURIComponent(REG_SKILL)}`);
            const e = after.entries?.[0];
            if (after.count !== 1 || e.version !== '1.0.0' || e.source.kind !== 'local_registry') throw new Error(`installed: ${JSON.stringify(after.entries)}`);
          },
        ],
        [
          'see the update available, its capability diff, and take it',
          async () => {
            execFileSync(PUBLISH_NEXT, { stdio: ['ignore', 'inherit', 'inherit'] });
            await go('nav-skills', '/skills');
            await expectText(tid(`update-available-${REG_SKILL}`), /1\.0\.0 → 1\.1\.0/, 'the update mark');
            await shot('14-update-available');
            // The dry run of an escalating update is answered 422
            // capability_escalation with the plan in its details; Chromium
            // logs every 4xx answer as a console error.
            allowedErrors = /status of 422/;
            await tid(`update-${REG_SKILL}`).click();
            await tid('update-plan').waitFor();
            await expectText(tid('update-versions'), /^1\.0\.0 → 1\.1\.0$/, 'the version change');
            await expectText(tid('capability-diff'), /\+ http host api\.example\.com/, 'the capability diff');
            if (!(await tid('confirm-ok').isDisabled())) throw new Error('an escalating update can be confirmed without accepting it');
            await shot('15-update-diff');
            await tid('update-accept').check();
            await tid('confirm-ok').click();
            await expectText(tid('banner'), /Updated .* from 1\.0\.0 to 1\.1\.0/, 'the update banner');
            await expectCount(tid(`update-available-${REG_SKILL}`), 0, 'update marks after the update');
            const row = page.locator(`[data-testid="skill-row"][data-skill-id="${REG_SKILL}"]`);
            await expectText(row, /1\.1\.0 \(current\)/, 'the updated row');
            allowedErrors = null;
          },
        ],
      ]
    : []),
  [
    'sign out',
    async () => {
      await tid('logout').click();
      await page.waitForURL((u) => u.pathname === '/login');
      await page.goto(`${BASE}/skills/palyra.echo`);
      await page.waitForURL((u) => u.pathname === '/login');
    },
  ],
];

let passed = 0;
let failed = 0;
try {
  for (const [name, fn] of steps) {
    const t0 = performance.now();
    try {
      await fn();
      if (problems.length) throw new Error(problems.join('\n  '));
      passed++;
      console.log(`ok   ${name} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}: ${e instanceof Error ? e.message : e}`);
      await page.screenshot({ path: join(ARTIFACTS, 'failure.png'), fullPage: true }).catch(() => {});
      console.log(`     screenshot: ${join(ARTIFACTS, 'failure.png')}; page ${page.url()}`);
      break;
    }
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}

const secs = ((performance.now() - started) / 1000).toFixed(1);
console.log('screenshots:');
for (const f of screenshots) console.log(`  ${f}`);
console.log(`e2e: ${passed} passed, ${failed} failed`);
console.log(`console e2e duration: ${secs} s`);
process.exit(failed === 0 && passed === steps.length ? 0 : 1);
