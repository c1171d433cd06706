import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { A2uiSurface } from '../a2ui/Renderer';
import { nextShown, shownFromReply, type Shown } from '../a2ui/session';
import type { Submit } from '../a2ui/types';
import { api, ApiError } from '../api/client';
import type { CallResponse, ToolEntry } from '../api/types';
import { Banner, errorBanner, JsonView, LoadError, time, useLoad, type BannerState } from '../components/common';
import { reasonsText } from './Approvals';
import { checkInput } from '../schemaform/check';
import { buildModel, collect, formable, initialState, stateFromValue, withPropertyOrder, type InputError, type State } from '../schemaform/model';
import { SchemaForm, testKey, type Errors } from '../schemaform/SchemaForm';
import { validateSchema } from '../schemaform/validate';
import { Link } from '../router';

function firstPerPath(errs: InputError[]): Errors {
  const out: Errors = {};
  for (const e of errs) if (!(e.path in out)) out[e.path] = e.message;
  return out;
}

/** What run-phase hooks said about a call: the preview a before_delivery hook set, and the annotations. */
export function HookNotes({ r }: { r: CallResponse }) {
  const notes = r.annotations ?? [];
  if (!r.preview && notes.length === 0) return null;
  return (
    <div className="hook-notes" data-testid="hook-notes">
      {r.preview ? (
        <div className="card" data-testid="call-preview">
          <strong>Preview</strong> <span className="muted">from hook {r.preview.hook_id}; the output below is unchanged</span>
          <p>{r.preview.text}</p>
        </div>
      ) : null}
      {notes.length ? (
        <ul className="annotations" aria-label="Hook annotations" data-testid="call-annotations">
          {notes.map((a, i) => (
            <li key={i} className={a.code ? 'field-error' : undefined}>
              <code>{a.hook_id}</code> <span className="muted">({a.event})</span>:{' '}
              {a.code ? `failed and was skipped (fail-open): ${a.code}${a.error ? ` — ${a.error}` : ''}` : a.message || JSON.stringify(a.data ?? null)}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function CallDetails({ r }: { r: CallResponse }) {
  return (
    <>
      <dl className="kv" data-testid="call-meta">
        <dt>Invocation</dt>
        <dd>
          <code>{r.invocation_id}</code>
        </dd>
        <dt>Version</dt>
        <dd>{r.version}</dd>
        <dt>Exit code</dt>
        <dd data-testid="exit-code">{r.exit_code}</dd>
        {r.tool_error ? (
          <>
            <dt>Tool error</dt>
            <dd className="field-error" data-testid="tool-error">
              {r.tool_error.code}: {r.tool_error.message}
            </dd>
          </>
        ) : null}
      </dl>
      <details>
        <summary>Stats</summary>
        <JsonView value={r.stats} testId="call-stats" />
      </details>
      <details open={!!r.logs?.length}>
        <summary>Logs ({r.logs?.length ?? 0})</summary>
        {r.logs?.length ? (
          <ol className="logs" data-testid="call-logs">
            {r.logs.map((l, i) => (
              <li key={i}>
                <span className={`log-${l.level}`}>{l.level}</span> {l.message}
              </li>
            ))}
          </ol>
        ) : (
          <p className="muted">No log lines.</p>
        )}
      </details>
    </>
  );
}

function Runner({ skillId, tool, order }: { skillId: string; tool: ToolEntry; order?: Record<string, string[]> }) {
  const schema = useMemo(() => withPropertyOrder(tool.input_schema ?? {}, order), [tool, order]);
  const node = useMemo(() => buildModel(schema), [schema]);
  const canForm = formable(node);
  const [mode, setMode] = useState<'form' | 'json'>(canForm ? 'form' : 'json');
  const [state, setState] = useState<State>(() => initialState(node));
  const [raw, setRaw] = useState('{}');
  const [timeout, setTimeoutMs] = useState('');
  const [errors, setErrors] = useState<InputError[]>([]);
  const [busy, setBusy] = useState(false);
  const [banner, setBanner] = useState<BannerState | null>(null);
  const [result, setResult] = useState<CallResponse | null>(null);
  const [shown, setShown] = useState<Shown | null>(null);
  const [reply, setReply] = useState<CallResponse | null>(null);
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  const toJSON = () => {
    const errs: InputError[] = [];
    const v = collect(node, state, '', errs) ?? {};
    setRaw(JSON.stringify(v, null, 2));
    setErrors([]);
    setMode('json');
  };
  const toForm = () => {
    try {
      const v = JSON.parse(raw);
      setState(stateFromValue(node, v));
      setErrors([]);
      setMode('form');
    } catch (e) {
      setErrors([{ path: '', message: `The JSON does not parse: ${(e as Error).message}` }]);
    }
  };

  const run = async (e: FormEvent) => {
    e.preventDefault();
    let value: unknown;
    let errs: InputError[];
    if (mode === 'form') {
      ({ value, errors: errs } = checkInput(schema, node, state));
    } else {
      try {
        value = JSON.parse(raw);
        errs = validateSchema(schema, value);
      } catch (err) {
        value = undefined;
        errs = [{ path: '', message: `The JSON does not parse: ${(err as Error).message}` }];
      }
    }
    let t: number | undefined;
    if (timeout.trim() !== '') {
      t = Number(timeout);
      if (!Number.isInteger(t) || t < 1 || t > 600000) errs.push({ path: '#timeout', message: 'A whole number of milliseconds from 1 to 600000.' });
    }
    setErrors(errs);
    if (errs.length > 0) {
      setBanner({ kind: 'error', title: `The input has ${errs.length} problem${errs.length === 1 ? '' : 's'}; see the marked fields.` });
      requestAnimationFrame(() => document.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
      return;
    }
    setBusy(true);
    setBanner(null);
    setReply(null);
    try {
      let r = await api.call(skillId, tool.id, value, t);
      if (r.pending) {
        // The call needs approval: wait for the decision (on the Approvals
        // page, the CLI or the API), then run it with the approval.
        const p = r.pending;
        setBanner({
          kind: 'info',
          title: `Waiting for approval ${p.id}…`,
          message: `This call needs a human’s approval (${reasonsText(p.reasons)}); decide it on the Approvals page. It expires at ${time(p.expires_at)}.`,
        });
        await waitDecided(p.id, alive);
        if (!alive.current) return;
        r = await api.call(skillId, tool.id, value, t, p.id);
      }
      setResult(r);
      setShown(shownFromReply(r));
      setBanner({ kind: r.tool_error ? 'error' : 'success', title: r.tool_error ? `The tool reported an error: ${r.tool_error.code}` : `Ran ${tool.name}.` });
    } catch (err) {
      setResult(err instanceof ApiError && err.details && typeof err.details === 'object' ? (err.details as CallResponse) : null);
      setShown(null);
      setBanner({ ...errorBanner(`${tool.name} failed`, err), details: undefined });
    } finally {
      setBusy(false);
    }
  };

  const submit = async (s: Submit): Promise<boolean> => {
    if (!shown) return false;
    try {
      const r = await api.submit(shown.documentId, s);
      setReply(r);
      const next = nextShown(shown, r);
      if (next) setShown(next);
      setBanner({
        kind: r.tool_error ? 'error' : 'success',
        title: r.tool_error ? `The tool reported an error: ${r.tool_error.code}` : next ? 'The form was sent; the tool’s reply is shown.' : 'The form was sent.',
      });
      return !r.tool_error;
    } catch (err) {
      setBanner(errorBanner('The form could not be sent', err));
      return false;
    }
  };

  const errMap = firstPerPath(errors);
  const summary = errors.filter((e) => mode === 'json' || e.path === '' || e.path.startsWith('#') || !document.querySelector(`[data-testid="field-${testKey(e.path)}"]`));

  return (
    <>
      <form onSubmit={run} noValidate className="card run-form" aria-labelledby="input-h" data-testid="run-form">
        <div className="page-head">
          <h2 id="input-h">Input</h2>
          <div className="toolbar segmented" role="group" aria-label="Edit the input as">
            <button
              type="button"
              className="secondary small"
              disabled={!canForm}
              onClick={() => mode !== 'form' && toForm()}
              data-testid="mode-form"
              aria-pressed={mode === 'form'}
              title={canForm ? undefined : 'The input schema cannot be shown as a form'}
            >
              Form
            </button>
            <button type="button" className="secondary small" onClick={() => mode !== 'json' && toJSON()} data-testid="mode-json" aria-pressed={mode === 'json'}>
              Raw JSON
            </button>
          </div>
        </div>
        {!canForm ? <p className="muted">The input schema cannot be shown as a form; edit the JSON.</p> : null}
        {summary.length ? (
          <ul className="error-summary" data-testid="error-summary">
            {summary.map((e, i) => (
              <li key={i}>
                {e.path && !e.path.startsWith('#') ? <code>{e.path}</code> : null} {e.message}
              </li>
            ))}
          </ul>
        ) : null}
        {mode === 'form' ? (
          <SchemaForm node={node} state={state} errors={errMap} onChange={setState} />
        ) : (
          <div className="field">
            <label htmlFor="raw-json">Input JSON</label>
            <textarea id="raw-json" className="mono" rows={12} spellCheck={false} value={raw} onChange={(e) => setRaw(e.target.value)} data-testid="raw-json" />
          </div>
        )}
        <div className="field narrow">
          <label htmlFor="timeout">Timeout in ms (optional)</label>
          <input id="timeout" type="number" min={1} max={600000} step={1} value={timeout} onChange={(e) => setTimeoutMs(e.target.value)} aria-invalid={errMap['#timeout'] ? true : undefined} />
        </div>
        <button type="submit" disabled={busy} data-testid="run-submit">
          {busy ? 'Running…' : `Run ${tool.name}`}
        </button>
      </form>
      <Banner banner={banner} onClose={() => setBanner(null)} />
      {result ? (
        <section className="card" aria-labelledby="result-h" data-testid="result">
          <h2 id="result-h">Result</h2>
          <HookNotes r={reply ?? result} />
          {shown ? (
            <A2uiSurface key={shown.documentId} doc={shown.doc} onSubmit={submit} />
          ) : result.output !== undefined && result.output !== null ? (
            <JsonView value={result.output} testId="result-json" />
          ) : (
            <p className="muted">No output.</p>
          )}
          {reply ? (
            <details open={!nextShownIs(reply)}>
              <summary>Last form reply</summary>
              <JsonView value={reply.output} testId="reply-json" />
            </details>
          ) : null}
          {shown ? (
            <details>
              <summary>Document JSON</summary>
              <JsonView value={shown.raw} testId="document-json" />
            </details>
          ) : null}
          <CallDetails r={reply ?? result} />
        </section>
      ) : null}
    </>
  );
}

/** Whether a reply carried a document or update (then the surface shows it). */
function nextShownIs(r: CallResponse): boolean {
  return !!r.a2ui;
}

export function RunToolPage({ skillId, toolId }: { skillId: string; toolId: string }) {
  const info = useLoad((s) => api.skill(skillId, undefined, s), [skillId]);
  if (info.error) return <LoadError error={info.error} what={`skill ${skillId}`} />;
  if (!info.data) return <p aria-busy="true">Loading…</p>;
  const tool = info.data.manifest?.entrypoints?.tools?.find((t) => t.id === toolId);
  return (
    <>
      <p className="crumbs">
        <Link to="/skills">Skills</Link> / <Link to={`/skills/${encodeURIComponent(skillId)}`}>{skillId}</Link> / {toolId}
      </p>
      <h1 data-testid="run-title">
        Run {tool?.name ?? toolId} <span className="muted">{info.data.inventory.version}</span>
      </h1>
      {tool?.hooks_only ? (
        <>
          <p>{tool.description}</p>
          <p className="banner banner-info" data-testid="hooks-only">
            {tool.name} is for hooks only: the daemon calls it for the events it is bound to, and it is not run from the console.
          </p>
        </>
      ) : tool ? (
        <>
          <p>{tool.description}</p>
          <Runner skillId={skillId} tool={tool} order={info.data.input_property_orders?.[tool.id]} />
        </>
      ) : (
        <p className="field-error">The skill has no tool {toolId}.</p>
      )}
    </>
  );
}

/** Polls approval id until it is no longer pending (or the page is left). */
async function waitDecided(id: string, alive: { current: boolean }): Promise<void> {
  let delay = 500;
  while (alive.current) {
    await new Promise((r) => setTimeout(r, delay));
    if (!alive.current) return;
    const a = await api.approval(id);
    if (a.state !== 'pending') return;
    delay = Math.min(delay * 2, 3000);
  }
}
