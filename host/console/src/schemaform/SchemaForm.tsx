import { useId, type ReactNode } from 'react';
import { initialState, type Node, type State } from './model';
import { escapeToken } from './validate';

// Renders the form model of an input schema. Every input has a label, a
// hint from the schema's description, and the error for its JSON Pointer
// next to it (aria-invalid, aria-describedby). Test ids are "field-" and
// the pointer with "." for "/" ("field-rows.0.label"), "field-root" for
// the whole input.

export type Errors = Record<string, string>;

export function testKey(path: string): string {
  return path === '' ? 'root' : path.slice(1).replace(/\//g, '.');
}

interface FieldProps {
  node: Node;
  state: State;
  path: string;
  required: boolean;
  errors: Errors;
  onChange: (s: State) => void;
  uid: string;
  /** Nested: an object is drawn as a fieldset with a legend. */
  legend?: boolean;
  /** An array item: its legend has no "required" mark. */
  item?: boolean;
}

function domId(uid: string, path: string) {
  return `${uid}f${testKey(path)}`;
}

function Described({ uid, path, node, errors }: { uid: string; path: string; node: Node; errors: Errors }) {
  const id = domId(uid, path);
  return (
    <>
      {node.description ? (
        <small id={`${id}-hint`} className="hint">
          {node.description}
        </small>
      ) : null}
      {errors[path] ? (
        <small id={`${id}-err`} className="field-error" data-testid={`error-${testKey(path)}`}>
          {errors[path]}
        </small>
      ) : null}
    </>
  );
}

function aria(uid: string, path: string, node: Node, errors: Errors) {
  const id = domId(uid, path);
  const by = [node.description ? `${id}-hint` : '', errors[path] ? `${id}-err` : ''].filter(Boolean).join(' ');
  return {
    id,
    'aria-invalid': errors[path] ? (true as const) : undefined,
    'aria-describedby': by || undefined,
    'data-testid': `field-${testKey(path)}`,
  };
}

function Label({ uid, path, node, required }: { uid: string; path: string; node: Node; required: boolean }) {
  return (
    <label htmlFor={domId(uid, path)}>
      {node.title}
      {required ? <span aria-hidden="true"> *</span> : null}
      {required ? <span className="visually-hidden"> (required)</span> : null}
    </label>
  );
}

function Field(p: FieldProps): ReactNode {
  const { node, state, path, required, errors, onChange, uid } = p;
  switch (node.kind) {
    case 'object': {
      const st = state.k === 'object' ? state : (initialState(node) as Extract<State, { k: 'object' }>);
      const body = node.props.map((pr) => (
        <Field
          key={pr.name}
          node={pr.node}
          state={st.props[pr.name] ?? initialState(pr.node, pr.required)}
          path={`${path}/${escapeToken(pr.name)}`}
          required={pr.required}
          errors={errors}
          uid={uid}
          legend
          onChange={(ns) => onChange({ k: 'object', props: { ...st.props, [pr.name]: ns } })}
        />
      ));
      if (!p.legend) {
        return (
          <div className="sf-object" data-testid={`object-${testKey(path)}`}>
            {body}
            <Described uid={uid} path={path} node={node} errors={errors} />
          </div>
        );
      }
      return (
        <fieldset className="sf-object" data-testid={`object-${testKey(path)}`}>
          <legend>
            {node.title}
            {required && !p.item ? <span aria-hidden="true"> *</span> : null}
          </legend>
          {body.length === 0 ? <p className="muted">No fields.</p> : body}
          <Described uid={uid} path={path} node={node} errors={errors} />
        </fieldset>
      );
    }
    case 'string': {
      const v = state.k === 'string' ? state.v : '';
      const set = (s: string) => onChange({ k: 'string', v: s });
      let control: ReactNode;
      if (node.enum) {
        control = (
          <select {...aria(uid, path, node, errors)} required={required} value={v} onChange={(e) => set(e.target.value)}>
            {!required || !node.enum.includes(v) ? <option value="">(none)</option> : null}
            {node.enum.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        );
      } else if (node.multiline && node.format !== 'email') {
        control = <textarea {...aria(uid, path, node, errors)} required={required} rows={3} value={v} onChange={(e) => set(e.target.value)} />;
      } else {
        control = (
          <input
            {...aria(uid, path, node, errors)}
            type={node.format === 'email' ? 'email' : 'text'}
            required={required}
            value={v}
            onChange={(e) => set(e.target.value)}
          />
        );
      }
      return (
        <div className="field">
          <Label uid={uid} path={path} node={node} required={required} />
          {control}
          <Described uid={uid} path={path} node={node} errors={errors} />
        </div>
      );
    }
    case 'number':
      return (
        <div className="field">
          <Label uid={uid} path={path} node={node} required={required} />
          <input
            {...aria(uid, path, node, errors)}
            type="number"
            inputMode={node.integer ? 'numeric' : 'decimal'}
            required={required}
            min={node.min ?? node.exclusiveMin}
            max={node.max ?? node.exclusiveMax}
            step={node.step ?? 'any'}
            value={state.k === 'number' ? state.v : ''}
            onChange={(e) => onChange({ k: 'number', v: e.target.value })}
          />
          <Described uid={uid} path={path} node={node} errors={errors} />
        </div>
      );
    case 'boolean':
      // An optional boolean without a default has three states: unset
      // (left out of the input), true and false.
      if (!required && node.default === undefined) {
        const v = state.k === 'boolean' ? state.v : null;
        return (
          <div className="field">
            <Label uid={uid} path={path} node={node} required={false} />
            <select
              {...aria(uid, path, node, errors)}
              value={v === null ? '' : String(v)}
              onChange={(e) => onChange({ k: 'boolean', v: e.target.value === '' ? null : e.target.value === 'true' })}
            >
              <option value="">(not set)</option>
              <option value="true">true</option>
              <option value="false">false</option>
            </select>
            <Described uid={uid} path={path} node={node} errors={errors} />
          </div>
        );
      }
      return (
        <div className="field field-checkbox">
          <label htmlFor={domId(uid, path)} className="check">
            <input
              {...aria(uid, path, node, errors)}
              type="checkbox"
              checked={state.k === 'boolean' && state.v === true}
              onChange={(e) => onChange({ k: 'boolean', v: e.target.checked })}
            />{' '}
            {node.title}
          </label>
          <Described uid={uid} path={path} node={node} errors={errors} />
        </div>
      );
    case 'array': {
      const items = state.k === 'array' ? state.items : [];
      const full = node.maxItems !== undefined && items.length >= node.maxItems;
      return (
        <fieldset className="sf-array" data-testid={`array-${testKey(path)}`}>
          <legend>
            {node.title}
            {required ? <span aria-hidden="true"> *</span> : null} <span className="muted">({items.length} item{items.length === 1 ? '' : 's'})</span>
          </legend>
          {items.map((it, i) => {
            const ip = `${path}/${i}`;
            return (
              <div className="sf-item" key={i}>
                <Field
                  node={{ ...node.items, title: `${node.items.title === 'Item' ? 'Item' : node.items.title} ${i + 1}` }}
                  state={it}
                  path={ip}
                  required
                  item
                  errors={errors}
                  uid={uid}
                  legend
                  onChange={(ns) => onChange({ k: 'array', items: items.map((x, j) => (j === i ? ns : x)) })}
                />
                <button
                  type="button"
                  className="secondary small"
                  data-testid={`remove-${testKey(ip)}`}
                  aria-label={`Remove ${node.title} item ${i + 1}`}
                  onClick={() => onChange({ k: 'array', items: items.filter((_, j) => j !== i) })}
                >
                  Remove
                </button>
              </div>
            );
          })}
          <button
            type="button"
            className="secondary small"
            data-testid={`add-${testKey(path)}`}
            disabled={full}
            onClick={() => onChange({ k: 'array', items: [...items, initialState(node.items)] })}
          >
            Add {node.title === 'Input' ? 'item' : `to ${node.title}`}
          </button>
          <Described uid={uid} path={path} node={node} errors={errors} />
        </fieldset>
      );
    }
    case 'choice': {
      const st = state.k === 'choice' ? state : (initialState(node) as Extract<State, { k: 'choice' }>);
      const br = node.branches[st.branch] ?? node.branches[0];
      const selId = `${domId(uid, path)}-branch`;
      return (
        <div className="sf-choice">
          <div className="field">
            <label htmlFor={selId}>{node.title === 'Input' ? 'Kind of input' : `${node.title}: kind`}</label>
            <select
              id={selId}
              data-testid={`branch-${testKey(path)}`}
              value={st.branch}
              onChange={(e) => onChange({ ...st, branch: Number(e.target.value) })}
            >
              {node.branches.map((b, i) => (
                <option key={i} value={i}>
                  {b.label}
                </option>
              ))}
            </select>
          </div>
          <Field
            node={br.node}
            state={st.states[st.branch] ?? initialState(br.node)}
            path={path}
            required={required}
            errors={errors}
            uid={uid}
            legend={p.legend}
            onChange={(ns) => onChange({ ...st, states: st.states.map((x, i) => (i === st.branch ? ns : x)) })}
          />
        </div>
      );
    }
    case 'const':
      return (
        <div className="field">
          <span className="label-like">{node.title}</span>
          <code data-testid={`field-${testKey(path)}`}>{JSON.stringify(node.value)}</code>
          <Described uid={uid} path={path} node={node} errors={errors} />
        </div>
      );
    case 'raw':
      return (
        <div className="field">
          <Label uid={uid} path={path} node={node} required={required} />
          <textarea
            {...aria(uid, path, node, errors)}
            className="mono"
            rows={4}
            spellCheck={false}
            value={state.k === 'raw' ? state.v : ''}
            onChange={(e) => onChange({ k: 'raw', v: e.target.value })}
          />
          <small className="hint">JSON ({node.reason}).</small>
          <Described uid={uid} path={path} node={node} errors={errors} />
        </div>
      );
  }
}

export function SchemaForm({ node, state, errors, onChange }: { node: Node; state: State; errors: Errors; onChange: (s: State) => void }) {
  const uid = useId().replace(/[^A-Za-z0-9_-]/g, '');
  return <Field node={node} state={state} path="" required errors={errors} onChange={onChange} uid={uid} />;
}
