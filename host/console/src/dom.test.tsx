// @vitest-environment jsdom
import { act, useState } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { normalizeDocument } from './a2ui/normalize';
import { A2uiSurface } from './a2ui/Renderer';
import type { Document, Submit } from './a2ui/types';
import { ConfirmDialog } from './components/common';
import { buildModel, initialState, type State } from './schemaform/model';
import { SchemaForm } from './schemaform/SchemaForm';

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
});

const $ = <T extends Element = HTMLElement>(testId: string) => host.querySelector<T & HTMLElement>(`[data-testid="${testId}"]`)!;

/** Sets an input's value the way a user does, so React sees the change. */
function type(el: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, value: string) {
  const proto = el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value')!.set!.call(el, value);
  el.dispatchEvent(new Event(el instanceof HTMLSelectElement ? 'change' : 'input', { bubbles: true }));
}

function doc(components: unknown[]): Document {
  const r = normalizeDocument({ v: 1, surface: 'report', components });
  if (!r.ok) throw new Error(r.error);
  return r.doc;
}

const addRow = {
  id: 'add',
  type: 'form',
  props: {
    title: 'Add a row',
    submit_label: 'Add',
    fields: [
      { id: 'label', type: 'text', label: 'Label', required: true },
      { id: 'value', type: 'number', label: 'Value', min: 0, max: 1000, step: 1, required: true },
      { id: 'kind', type: 'select', label: 'Chart', options: [{ label: 'Bar', value: 'bar' }, { label: 'Pie', value: 'pie' }] },
      { id: 'mail', type: 'email', label: 'Mail' },
      { id: 'ok', type: 'checkbox', label: 'OK' },
    ],
  },
};

describe('A2UI form', () => {
  it('checks the fields, then submits {componentId, values} and resets', async () => {
    const calls: Submit[] = [];
    const onSubmit = vi.fn(async (s: Submit) => {
      calls.push(s);
      return true;
    });
    act(() => root.render(<A2uiSurface doc={doc([addRow])} onSubmit={onSubmit} />));
    const label = $<HTMLInputElement>('a2ui-field-label');
    const value = $<HTMLInputElement>('a2ui-field-value');

    // Blank required fields and a bad email stay here, marked.
    act(() => type($<HTMLInputElement>('a2ui-field-mail'), 'not-mail'));
    await act(async () => $('a2ui-submit').click());
    expect(onSubmit).not.toHaveBeenCalled();
    expect(label.getAttribute('aria-invalid')).toBe('true');
    expect(value.getAttribute('aria-invalid')).toBe('true');
    expect($('a2ui-field-mail').getAttribute('aria-invalid')).toBe('true');
    const errId = label.getAttribute('aria-describedby')!;
    expect(document.getElementById(errId)?.textContent).toBe('Required.');

    act(() => type(value, '2.5'));
    await act(async () => $('a2ui-submit').click());
    expect(document.getElementById(value.getAttribute('aria-describedby')!)?.textContent).toContain('multiple of 1');

    act(() => {
      type(label, 'gamma');
      type(value, '7');
      type($<HTMLSelectElement>('a2ui-field-kind'), 'pie');
      type($<HTMLInputElement>('a2ui-field-mail'), 'ops@example.org');
      $('a2ui-field-ok').click();
    });
    await act(async () => $('a2ui-submit').click());
    expect(calls).toEqual([{ componentId: 'add', values: { label: 'gamma', value: 7, kind: 'pie', mail: 'ops@example.org', ok: true } }]);
    expect($<HTMLInputElement>('a2ui-field-label').value).toBe('');
  });

  it('leaves an optional empty number out', async () => {
    const onSubmit = vi.fn(async () => false);
    const form = { id: 'f', type: 'form', props: { fields: [{ id: 'n', type: 'number' }] } };
    act(() => root.render(<A2uiSurface doc={doc([form])} onSubmit={onSubmit} />));
    await act(async () => $('a2ui-submit').click());
    expect(onSubmit).toHaveBeenCalledWith({ componentId: 'f', values: {} });
  });
});

describe('error boundary', () => {
  it('shows a placeholder for a component that throws and renders the rest', () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    const broken = {
      v: 1,
      surface: 's',
      components: [
        { id: 'bad', type: 'table', props: { columns: null, rows: null } },
        { id: 'ok', type: 'text', props: { value: 'still here', tone: 'normal' } },
      ],
    } as unknown as Document;
    act(() => root.render(<A2uiSurface doc={broken} />));
    spy.mockRestore();
    expect($('a2ui-error').textContent).toContain('Component “bad” could not be shown');
    expect(host.textContent).toContain('still here');
  });
});

describe('confirmation dialog', () => {
  function Harness({ onConfirm }: { onConfirm: () => void }) {
    const [open, setOpen] = useState(false);
    return (
      <>
        <button type="button" data-testid="opener" onClick={() => setOpen(true)}>
          Open
        </button>
        {open ? (
          <ConfirmDialog title="Sure?" confirmLabel="Yes" onClose={() => setOpen(false)} onConfirm={onConfirm}>
            <input data-testid="inside" data-autofocus />
          </ConfirmDialog>
        ) : null}
      </>
    );
  }

  it('moves focus in, traps Tab, closes on Escape and gives focus back', () => {
    act(() => root.render(<Harness onConfirm={() => {}} />));
    const opener = $('opener');
    opener.focus();
    act(() => opener.click());
    const dialog = $('confirm-dialog');
    expect(dialog.getAttribute('role')).toBe('dialog');
    expect(dialog.getAttribute('aria-modal')).toBe('true');
    expect(document.activeElement).toBe($('inside'));
    // Tab from the last button wraps to the first focusable; Shift+Tab back.
    $('confirm-ok').focus();
    act(() => $('confirm-ok').dispatchEvent(new KeyboardEvent('keydown', { key: 'Tab', bubbles: true })));
    expect(document.activeElement).toBe($('inside'));
    act(() => $('inside').dispatchEvent(new KeyboardEvent('keydown', { key: 'Tab', shiftKey: true, bubbles: true })));
    expect(document.activeElement).toBe($('confirm-ok'));
    act(() => $('confirm-ok').dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true })));
    expect(host.querySelector('[data-testid="confirm-dialog"]')).toBeNull();
    expect(document.activeElement).toBe(opener);
  });

  it('confirms with the button', async () => {
    const onConfirm = vi.fn();
    act(() => root.render(<Harness onConfirm={onConfirm} />));
    act(() => $('opener').click());
    await act(async () => $('confirm-ok').click());
    expect(onConfirm).toHaveBeenCalledOnce();
  });
});

describe('schema form', () => {
  const report = {
    type: 'object',
    oneOf: [
      {
        title: 'Report',
        type: 'object',
        required: ['title', 'rows'],
        properties: {
          rows: { type: 'array', maxItems: 2, items: { type: 'object', required: ['label', 'value'], properties: { label: { type: 'string' }, value: { type: 'number' } } } },
          title: { type: 'string', description: 'Shown on top' },
        },
      },
      { title: 'Form submit', type: 'object', required: ['a2ui_submit'], properties: { a2ui_submit: { type: 'object' } } },
    ],
  };

  function Harness({ onState }: { onState: (s: State) => void }) {
    const node = buildModel(report);
    const [st, setSt] = useState<State>(() => initialState(node));
    return (
      <SchemaForm
        node={node}
        state={st}
        errors={{ '/title': 'Must not be empty.' }}
        onChange={(s) => {
          setSt(s);
          onState(s);
        }}
      />
    );
  }

  it('adds and removes rows of objects, labels every input, switches branches', () => {
    let last: State | null = null;
    act(() => root.render(<Harness onState={(s) => (last = s)} />));
    expect($<HTMLSelectElement>('branch-root').options[0].textContent).toBe('Report');
    act(() => $('add-rows').click());
    act(() => $('add-rows').click());
    expect($<HTMLButtonElement>('add-rows').disabled).toBe(true); // maxItems 2
    act(() => type($<HTMLInputElement>('field-rows.1.label'), 'b'));
    act(() => $('remove-rows.0').click());
    expect(host.querySelectorAll('[data-testid^="remove-rows."]')).toHaveLength(1);
    expect($<HTMLInputElement>('field-rows.0.label').value).toBe('b');
    // Every input has a label that points at it.
    for (const el of host.querySelectorAll('input, select, textarea')) {
      expect(host.querySelector(`label[for="${el.id}"]`), `label for ${el.getAttribute('data-testid')}`).not.toBeNull();
    }
    const title = $<HTMLTextAreaElement>('field-title');
    expect(title.getAttribute('aria-invalid')).toBe('true');
    expect(title.getAttribute('aria-describedby')!.split(' ').map((id) => document.getElementById(id)?.textContent)).toEqual(['Shown on top', 'Must not be empty.']);
    act(() => type($<HTMLSelectElement>('branch-root'), '1'));
    expect(host.querySelector('[data-testid="field-a2ui_submit"]')).not.toBeNull();
    const l = last as State | null;
    expect(l && l.k === 'choice' ? l.branch : -1).toBe(1);
  });

  it('shows an optional boolean as unset/true/false and a required one as a checkbox', () => {
    const schema = { type: 'object', required: ['r'], properties: { o: { type: 'boolean' }, r: { type: 'boolean' } } };
    function Bools({ onState }: { onState: (s: State) => void }) {
      const node = buildModel(schema);
      const [st, setSt] = useState<State>(() => initialState(node));
      return <SchemaForm node={node} state={st} errors={{}} onChange={(s) => (setSt(s), onState(s))} />;
    }
    let last: State | null = null;
    act(() => root.render(<Bools onState={(s) => (last = s)} />));
    const o = $<HTMLSelectElement>('field-o');
    expect(o.tagName).toBe('SELECT');
    expect(o.value).toBe('');
    expect($<HTMLInputElement>('field-r').type).toBe('checkbox');
    act(() => type(o, 'false'));
    const l = last as State | null;
    expect(l && l.k === 'object' ? l.props.o : null).toEqual({ k: 'boolean', v: false });
  });
});
