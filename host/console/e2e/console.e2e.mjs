// End-to-end test of the web console: Debian's Chromium, driven by
// playwright-core, against a real palyra-host serving the example skills
// (see scripts/console-e2e.sh, which starts one).
//
//   PALYRA_URL=http://127.0.0.1:PORT PALYRA_TOKEN=palyra_... node e2e/console.e2e.mjs
//
// It signs in, lists the skills, opens one, runs echo from the generated
// form, runs report and sees its table and chart, submits the report's
// A2UI form and sees the reply, quarantines and enables a skill, sees the
// quarantine on the events page, sees this machine's node on the
// Cluster page, and removes the event-log skill a hook binding runs: the
// refusal names the binding, and "Remove and disable those hooks" removes
// it and disables the binding. With PALYRA_E2E_REGISTRY (a local registry directory
// holding PALYRA_E2E_REGISTRY_SKILL 1.0.0) and PALYRA_E2E_PUBLISH_NEXT (a
// program that publishes 1.1.0 there, granted one more HTTP host), it also
// installs that skill from the registry (the dry run's preview, then the
// confirm), publishes 1.1.0, sees "update available" on the skills list,
// and takes the update after its capability diff.
//
// Every page and view (dialogs, the raw JSON editor, the A2UI result) is
// looked at twice, at 1400 px and at 420 px wide: axe-core (injected into
// the page) audits it, a serious or critical violation fails the run and
// is printed with its elements, and the counts by impact are printed per
// page at the end; our own checks (labels, landmarks, contrast, no inline
// style, and at 420 px nothing wider than the screen and "Sign out" on
// it) run too; and a full-page screenshot is saved in $E2E_ARTIFACTS
// (default e2e/artifacts/) as NN-name-1400.png and NN-name-420.png. Any
// console error, page error or request to another host than the daemon
// fails the run.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
// axe-core's browser bundle, evaluated in the page through the DevTools
// protocol (the console's Content-Security-Policy forbids inline scripts,
// and it stays on: the audit is of the console as it is served).
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** The widths every page is audited and photographed at (px). */
const WIDTHS = [1400, 420];
const HEIGHT = 900;
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
const axeCounts = []; // { page, width, critical, serious, moderate, minor }
let allowedErrors = null; // a RegExp of console errors a step expects

const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
  viewport: { width: WIDTHS[0], height: HEIGHT },
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

/**
 * Runs axe-core on the page as it is (WCAG 2.x A and AA rules and axe's
 * best practices). Records the counts by impact; a serious or critical
 * violation is a problem, printed with the elements it concerns.
 */
async function checkAxe(name, width) {
  const injected = await page.evaluate(() => typeof window.axe === 'object');
  if (!injected) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary?.split('\n').slice(1, 2).join('').trim() ?? ''}`) }));
  });
  const count = { page: name, width, critical: 0, serious: 0, moderate: 0, minor: 0 };
  for (const v of violations) count[v.impact in count ? v.impact : 'minor'] += v.nodes.length;
  axeCounts.push(count);
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (bad.length) {
    problems.push(
      `${name} at ${width} px: axe-core: ${bad.length} serious or critical rule${bad.length === 1 ? '' : 's'} broken:\n` +
        bad.map((v) => `    [${v.impact}] ${v.id}: ${v.help}\n${v.nodes.slice(0, 5).map((n) => `      - ${n}`).join('\n')}`).join('\n'),
    );
  }
}

/** At a narrow width: nothing is wider than the screen, and "Sign out" is on it. */
async function checkNarrow(name, width) {
  const issues = await page.evaluate((w) => {
    const out = [];
    if (document.documentElement.scrollWidth > w + 1) {
      // A wide table scrolls in its own box (.table-wrap); the page itself must not.
      const wide = [];
      for (const el of document.querySelectorAll('body *')) {
        if (el.closest('.table-wrap, .visually-hidden') && !el.matches('.table-wrap')) continue;
        const r = el.getBoundingClientRect();
        if (r.right > w + 1 && wide.length < 3) wide.push(`${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : ''}${el.dataset.testid ? `[${el.dataset.testid}]` : ''} (${Math.round(r.right)} px)`);
      }
      out.push(`the page is ${document.documentElement.scrollWidth} px wide: ${wide.join(', ')}`);
    }
    const logout = document.querySelector('[data-testid="logout"]');
    if (logout) {
      const r = logout.getBoundingClientRect();
      if (r.width === 0 || r.left < 0 || r.right > w) out.push(`"Sign out" is at ${Math.round(r.left)}..${Math.round(r.right)} px, off the screen`);
    }
    return out;
  }, width);
  if (issues.length) problems.push(`${name} at ${width} px: ${issues.join('; ')}`);
}

/** Audits and photographs the page at each width, then goes back to the first. */
async function shot(name) {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: HEIGHT });
    // Let the layout settle at the new width before looking.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await checkA11y(`${name} at ${width} px`);
    await checkAxe(name, width);
    if (width < 600) await checkNarrow(name, width);
    const file = join(ARTIFACTS, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage: true });
    screenshots.push(file);
  }
  await page.setViewportSize({ width: WIDTHS[0], height: HEIGHT });
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
      // The Config section answers for a skill without [config] too.
      await expectText(tid('section-config'), /declares no config/, 'the config section');
      await expectText(tid('skill-missing-config'), /^none$/, 'the missing config');
      // Each action only where it applies: the active version offers
      // Quarantine and Disable, not Enable.
      await tid('action-quarantine').waitFor();
      await tid('action-disable').waitFor();
      await expectCount(tid('action-enable'), 0, 'Enable buttons on an active skill');
      await shot('03-skill-detail');
    },
  ],
  [
    'run echo from the generated form',
    async () => {
      await go('run-palyra.echo', '/skills/palyra.echo/tools/palyra.echo');
      // The Form / Raw JSON toggle says which is on.
      await expectText(page.locator('[data-testid="mode-form"][aria-pressed="true"]'), /Form/, 'the pressed Form button');
      await tid('mode-json').click();
      await page.locator('[data-testid="mode-json"][aria-pressed="true"]').waitFor();
      await page.locator('[data-testid="mode-form"][aria-pressed="false"]').waitFor();
      await tid('raw-json').waitFor();
      await shot('04-run-echo-raw-json');
      await tid('mode-form').click();
      await page.locator('[data-testid="mode-form"][aria-pressed="true"]').waitFor();
      await tid('field-text').fill('hello from the console');
      await tid('run-submit').click();
      await expectText(tid('result-json'), /"echo": "hello from the console"/, 'the echo result');
      await expectText(tid('exit-code'), /^0$/, 'the exit code');
      await shot('05-run-echo');
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
      // Whole numbers: whole-number ticks.
      const ticks = await tid('chart-value-tick').allTextContents();
      if (ticks.length < 2 || !ticks.every((t) => /^\d+$/.test(t))) throw new Error(`chart ticks ${JSON.stringify(ticks)}, want whole numbers`);
      await shot('06-run-report');
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
      await shot('07-a2ui-submit');
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
      // The disabled Quarantine button of the dialog, audited for contrast.
      await shot('08-quarantine-dialog');
      await tid('confirm-reason').fill('e2e: checking the quarantine flow');
      await tid('confirm-ok').click();
      await expectText(tid('banner'), /Quarantine: done/, 'the result banner');
      await expectText(tid('skill-status'), /^quarantined$/, 'the status');
      await expectText(tid('history'), /e2e: checking the quarantine flow/, 'the status history');
      await tid('action-enable').waitFor();
      await expectCount(tid('action-quarantine'), 0, 'Quarantine buttons on a quarantined skill');
      await shot('09-quarantined');
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
      await expectCount(tid('action-enable'), 0, 'Enable buttons once enabled');
      // The echo run counted in the metrics; a success is no error.
      await expectText(tid('metrics-calls'), /^[1-9]\d*$/, 'the calls');
      const byCode = (await tid('metrics-errors-by-code').textContent()) ?? '';
      if (/\bok\b/.test(byCode)) throw new Error(`"Errors by code" lists ok: ${byCode}`);
      await shot('10-enabled');
    },
  ],
  [
    'the events page shows the quarantine',
    async () => {
      await go('nav-events', '/events');
      await page.locator('[data-testid="event-row"][data-kind="skill:quarantined"][data-skill-id="palyra.echo"]').first().waitFor();
      await page.locator('[data-testid="event-row"][data-kind="skill:enabled"][data-skill-id="palyra.echo"]').first().waitFor();
      await expectText(tid('events-status'), /open/, 'the stream status');
      await shot('11-events');
    },
  ],
  [
    'hooks and install pages',
    async () => {
      await go('nav-hooks', '/hooks');
      await page.locator('[data-testid="hook-row"][data-hook-id="event-log.quarantined"]').waitFor();
      await shot('12-hooks');
      await go('nav-install', '/install');
      await tid('install-form').waitFor();
      await shot('13-install');
    },
  ],
  [
    'a call that needs approval waits on the Approvals page; approved, it runs once',
    async () => {
      const call = (body) =>
        fetch(`${BASE}/v1/skills/palyra.approval_echo/tools/palyra.echo/call`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', 'X-Palyra-Principal': 'user:e2e' },
          body: JSON.stringify(body),
        });
      const input = { text: 'launch' };
      const res = await call({ input });
      if (res.status !== 202) throw new Error(`call: HTTP ${res.status}, want 202: ${await res.text()}`);
      const id = (await res.json()).pending.id;
      await go('nav-approvals', '/approvals');
      const row = page.locator(`[data-testid="approval-row"][data-approval-id="${id}"][data-state="pending"]`);
      await row.waitFor();
      await expectText(row, /palyra\.approval_echo.*user:e2e.*manifest: requires_approval/s, 'the approval');
      await expectText(tid(`approval-input-${id}`), /"text": "launch"/, 'the input');
      await shot('14a-approvals');
      await tid(`approval-approve-${id}`).click();
      await tid('confirm-dialog').waitFor();
      await tid('approval-reason').fill('expected launch');
      await shot('14b-approve-dialog');
      await tid('confirm-ok').click();
      await expectText(tid('banner'), new RegExp(`${escapeRe(id)}: approved`), 'the banner');
      await expectCount(page.locator(`[data-testid="approval-row"][data-approval-id="${id}"]`), 0, 'the decided approval among the pending');
      const ran = await call({ input, approval_id: id });
      if (ran.status !== 200) throw new Error(`approved call: HTTP ${ran.status}: ${await ran.text()}`);
      const again = await call({ input, approval_id: id });
      if (again.status !== 409) throw new Error(`second use: HTTP ${again.status}, want 409`);
      const shown = await apiGet(`/v1/approvals/${id}`);
      if (shown.state !== 'used' || !shown.decided_by || shown.used_by !== 'user:e2e') throw new Error(`approval after use: ${JSON.stringify(shown)}`);
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
      await shot('14-cluster');
    },
  ],
  [
    'a page that does not exist',
    async () => {
      await page.goto(`${BASE}/no-such-page`);
      await expectText(page.locator('h1'), /Page not found/, 'the heading');
      await shot('15-not-found');
    },
  ],
  ...(REGISTRY
    ? [
        [
          'install from a file: the confirmation shows what the dry run found',
          async () => {
            await go('nav-install', '/install');
            await tid('install-file').setInputFiles(join(REGISTRY, 'registry-echo-1.0.0.palyra-skill'));
            await tid('install-submit').click();
            await tid('confirm-dialog').waitFor();
            await expectText(tid('preview-skill'), new RegExp(`^${escapeRe(REG_SKILL)}$`), 'the skill');
            await expectText(tid('preview-version'), /^1\.0\.0$/, 'the version');
            await expectText(tid('preview-publisher'), /^palyra$/, 'the publisher');
            await expectText(tid('preview-grants'), /HTTP hosts/, 'the requested capabilities');
            await expectText(tid('install-file-size'), /^\d+(\.\d)? (KiB|MiB)$/, 'the size');
            await shot('16-install-file-confirm');
            await tid('confirm-cancel').click();
            await expectCount(tid('confirm-dialog'), 0, 'dialogs after Cancel');
            const after = await apiGet(`/v1/skills?skill_id=${encodeURIComponent(REG_SKILL)}`);
            if (after.count !== 0) throw new Error(`the file's dry run installed something: ${JSON.stringify(after.entries)}`);
          },
        ],
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
            await shot('17-registry-preview');
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
            await shot('18-update-available');
            // The dry run of an escalating update is answered 422
            // capability_escalation with the plan in its details; Chromium
            // logs every 4xx answer as a console error.
            allowedErrors = /status of 422/;
            await tid(`update-${REG_SKILL}`).click();
            await tid('update-plan').waitFor();
            await expectText(tid('update-versions'), /^1\.0\.0 → 1\.1\.0$/, 'the version change');
            await expectText(tid('capability-diff'), /\+ http host api\.example\.com/, 'the capability diff');
            if (!(await tid('confirm-ok').isDisabled())) throw new Error('an escalating update can be confirmed without accepting it');
            await shot('19-update-diff');
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
    'remove a skill hooks run: the bindings shown, then remove and disable them',
    async () => {
      // event-log is run by the enabled binding event-log.quarantined: the
      // plain remove is answered 412 skill_referenced_by_hook (Chromium logs
      // the 4xx as a console error), and the dialog names the binding.
      allowedErrors = /status of 412/;
      await page.goto(`${BASE}/skills/palyra.event_log`);
      await expectText(tid('skill-title'), /Event log/, 'the title');
      await tid('action-remove').click();
      await tid('confirm-dialog').waitFor();
      await tid('confirm-ok').click();
      await tid('remove-hook-refs').waitFor();
      await page.locator('[data-testid="remove-hook-ref"][data-hook-id="event-log.quarantined"]').waitFor();
      await expectText(tid('confirm-ok'), /^Remove and disable those hooks$/, 'the forced remove button');
      const still = await apiGet('/v1/skills?skill_id=palyra.event_log');
      if (still.count !== 1) throw new Error(`the refused remove removed: ${JSON.stringify(still.entries)}`);
      await shot('20-remove-referenced');
      await tid('confirm-ok').click();
      await page.waitForURL((u) => u.pathname === '/skills');
      const gone = await apiGet('/v1/skills?skill_id=palyra.event_log');
      if (gone.count !== 0) throw new Error(`the forced remove left: ${JSON.stringify(gone.entries)}`);
      const hooks = await apiGet('/v1/hooks');
      const b = (hooks.bindings ?? []).find((x) => x.hook_id === 'event-log.quarantined');
      if (!b || b.enabled) throw new Error(`the binding after the forced remove: ${JSON.stringify(b)}`);
      allowedErrors = null;
    },
  ],
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
console.log('axe-core violations (elements) per page and width:');
console.log(`  ${'page'.padEnd(28)} ${'width'.padStart(5)} critical serious moderate minor`);
for (const c of axeCounts) {
  console.log(`  ${c.page.padEnd(28)} ${String(c.width).padStart(5)} ${String(c.critical).padStart(8)} ${String(c.serious).padStart(7)} ${String(c.moderate).padStart(8)} ${String(c.minor).padStart(5)}`);
}
const total = (k) => axeCounts.reduce((n, c) => n + c[k], 0);
console.log(`axe-core: ${axeCounts.length} audits, critical ${total('critical')}, serious ${total('serious')}, moderate ${total('moderate')}, minor ${total('minor')}`);
console.log('screenshots:');
for (const f of screenshots) console.log(`  ${f}`);
console.log(`e2e: ${passed} passed, ${failed} failed`);
console.log(`console e2e duration: ${secs} s`);
process.exit(failed === 0 && passed === steps.length ? 0 : 1);
