import { Component as ReactComponent, useId, useState, type ErrorInfo, type FormEvent, type ReactNode } from 'react';
import { Chart } from './Chart';
import { collectSubmit, initialInputs, type FormInputs } from './formvalidate';
import { Markdown } from './markdown';
import type { Component, Document, FormField, Submit } from './types';

// The A2UI renderer: one element per component of a normalized document,
// each inside its own error boundary so one bad component cannot take the
// page down. Forms call onSubmit with {componentId, values}; the caller
// posts it and gives back the next document.

/** Posts a submit; resolves true when the tool accepted it (the form then resets). */
export type SubmitHandler = (s: Submit) => Promise<boolean>;

class Boundary extends ReactComponent<{ id: string; children: ReactNode }, { error: string | null }> {
  override state = { error: null as string | null };
  static getDerivedStateFromError(e: unknown) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
  override componentDidCatch(_e: unknown, _info: ErrorInfo) {
    // The placeholder says what happened; nothing else to do.
  }
  override render() {
    if (this.state.error !== null) {
      return (
        <div className="a2ui-placeholder" role="note" data-testid="a2ui-error">
          Component “{this.props.id}” could not be shown: {this.state.error}
        </div>
      );
    }
    return this.props.children;
  }
}

export function A2uiSurface({ doc, onSubmit }: { doc: Document; onSubmit?: SubmitHandler }) {
  return (
    <section className="a2ui-surface" aria-label={`A2UI surface ${doc.surface}`} data-testid="a2ui-surface" data-surface={doc.surface}>
      {doc.components.map((c) => (
        <Boundary key={`${c.type}:${c.id}`} id={c.id}>
          <div className="a2ui-component" data-component-id={c.id}>
            <A2uiComponent c={c} onSubmit={onSubmit} />
          </div>
        </Boundary>
      ))}
    </section>
  );
}

export function A2uiComponent({ c, onSubmit }: { c: Component; onSubmit?: SubmitHandler }) {
  switch (c.type) {
    case 'text':
      return (
        <p className={`a2ui-text tone-${c.props.tone}`} data-testid="a2ui-text" data-tone={c.props.tone}>
          {c.props.value}
        </p>
      );
    case 'markdown':
      return (
        <div className="a2ui-markdown" data-testid="a2ui-markdown">
          <Markdown source={c.props.value} />
        </div>
      );
    case 'list': {
      const items = c.props.items.map((it, i) => <li key={i}>{it}</li>);
      return c.props.ordered ? (
        <ol className="a2ui-list" data-testid="a2ui-list">
          {items}
        </ol>
      ) : (
        <ul className="a2ui-list" data-testid="a2ui-list">
          {items}
        </ul>
      );
    }
    case 'table':
      return (
        <div className="table-wrap" tabIndex={0}>
          <table className="a2ui-table" data-testid="a2ui-table">
            <thead>
              <tr>
                {c.props.columns.map((col, i) => (
                  <th key={i} scope="col">
                    {col}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {c.props.rows.map((row, i) => (
                <tr key={i}>
                  {row.map((cell, j) =>
                    j === 0 ? (
                      <th key={j} scope="row">
                        {cell}
                      </th>
                    ) : (
                      <td key={j}>{cell}</td>
                    ),
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    case 'chart':
      return <Chart title={c.props.title} kind={c.props.kind} series={c.props.series} />;
    case 'form':
      // A form whose fields change (by a patch) starts afresh.
      return <A2uiForm key={JSON.stringify(c.props.fields)} id={c.id} {...c.props} onSubmit={onSubmit} />;
    case 'unknown':
      return (
        <div className="a2ui-placeholder" role="note" data-testid="a2ui-unknown">
          Unsupported component “{c.props.originalType}” (id {c.id}) is not shown.
        </div>
      );
  }
}

function A2uiForm({
  id,
  title,
  submitLabel,
  fields,
  onSubmit,
}: {
  id: string;
  title: string;
  submitLabel: string;
  fields: FormField[];
  onSubmit?: SubmitHandler;
}) {
  const uid = useId();
  const [inputs, setInputs] = useState<FormInputs>(() => initialInputs(fields));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const { values, errors: errs } = collectSubmit(fields, inputs);
    setErrors(errs);
    if (Object.keys(errs).length > 0 || !onSubmit) return;
    setBusy(true);
    try {
      if (await onSubmit({ componentId: id, values })) setInputs(initialInputs(fields));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="a2ui-form" onSubmit={submit} noValidate data-testid="a2ui-form" aria-labelledby={`${uid}-title`}>
      <h3 id={`${uid}-title`}>{title}</h3>
      {fields.map((f) => {
        const fid = `${uid}-${f.id}`;
        const err = errors[f.id];
        const described = [f.hint ? `${fid}-hint` : '', err ? `${fid}-err` : ''].filter(Boolean).join(' ') || undefined;
        const common = {
          id: fid,
          name: f.id,
          'aria-invalid': err ? true : undefined,
          'aria-describedby': described,
          'data-testid': `a2ui-field-${f.id}`,
        };
        const set = (v: string | boolean) => setInputs((s) => ({ ...s, [f.id]: v }));
        let control: ReactNode;
        switch (f.type) {
          case 'checkbox':
            control = <input type="checkbox" {...common} checked={inputs[f.id] === true} onChange={(e) => set(e.target.checked)} />;
            break;
          case 'select':
            control = (
              <select {...common} value={String(inputs[f.id] ?? '')} onChange={(e) => set(e.target.value)}>
                {f.options.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
              </select>
            );
            break;
          case 'number':
            control = (
              <input
                type="number"
                {...common}
                required={f.required}
                min={f.min}
                max={f.max}
                step={f.step}
                value={String(inputs[f.id] ?? '')}
                onChange={(e) => set(e.target.value)}
              />
            );
            break;
          default:
            control = (
              <input
                type={f.type === 'email' ? 'email' : 'text'}
                {...common}
                required={f.required}
                placeholder={f.placeholder || undefined}
                value={String(inputs[f.id] ?? '')}
                onChange={(e) => set(e.target.value)}
              />
            );
        }
        return (
          <div className={`field field-${f.type}`} key={f.id}>
            {f.type === 'checkbox' ? (
              <label htmlFor={fid} className="check">
                {control} {f.label}
              </label>
            ) : (
              <>
                <label htmlFor={fid}>
                  {f.label}
                  {f.required ? <span aria-hidden="true"> *</span> : null}
                </label>
                {control}
              </>
            )}
            {f.hint ? (
              <small id={`${fid}-hint`} className="hint">
                {f.hint}
              </small>
            ) : null}
            {err ? (
              <small id={`${fid}-err`} className="field-error" role="alert">
                {err}
              </small>
            ) : null}
          </div>
        );
      })}
      <button type="submit" disabled={busy || !onSubmit} data-testid="a2ui-submit">
        {busy ? 'Sending…' : submitLabel}
      </button>
    </form>
  );
}
