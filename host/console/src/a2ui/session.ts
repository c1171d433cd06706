import { normalizeDocument } from './normalize';
import { applyPatch } from './patch';
import type { Document } from './types';

// One shown A2UI document and how a tool's reply changes it: a reply that
// carries a new document replaces it; a reply that is an update
// ({"a2ui_update": {surface, patch}}, with a2ui.patch and the same
// document id) is applied to it as a JSON patch and the result normalized
// again.

export interface A2uiRef {
  document_id: string;
  surface: string;
  patch?: unknown;
}

/** The parts of a call response the A2UI session reads. */
export interface A2uiReply {
  output?: unknown;
  a2ui?: A2uiRef | null;
}

export interface Shown {
  documentId: string;
  /** The document JSON as the tool sent it (patches apply to it). */
  raw: unknown;
  doc: Document;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether v looks like an A2UI document ({v, surface, components}). */
export function looksLikeDocument(v: unknown): boolean {
  return isObj(v) && 'v' in v && 'surface' in v && 'components' in v;
}

/** The patch a reply carries, if it is an update; patch_json strings are parsed. */
export function updateOf(r: A2uiReply): { surface?: string; patch: unknown } | null {
  const fromRef = r.a2ui && r.a2ui.patch !== undefined ? { surface: r.a2ui.surface, patch: r.a2ui.patch } : null;
  if (fromRef) return fromRef;
  const out = r.output;
  if (!isObj(out)) return null;
  const u = out.a2ui_update ?? out.a2ui;
  if (!isObj(u)) return null;
  let patch = u.patch;
  if (patch === undefined && typeof u.patch_json === 'string') patch = JSON.parse(u.patch_json);
  if (patch === undefined) return null;
  return { surface: typeof u.surface === 'string' ? u.surface : undefined, patch };
}

/** The document of a reply that carries one, or null. Throws on an unusable document. */
export function shownFromReply(r: A2uiReply): Shown | null {
  if (!r.a2ui || !looksLikeDocument(r.output)) return null;
  const n = normalizeDocument(r.output);
  if (!n.ok) throw new Error(n.error);
  return { documentId: r.a2ui.document_id, raw: r.output, doc: n.doc };
}

/**
 * The document to show after a reply to a form of current: a new document,
 * current patched, or null when the reply is neither (its output is then
 * shown as JSON and current stays). Throws PatchError or Error when an
 * update does not apply.
 */
export function nextShown(current: Shown, r: A2uiReply): Shown | null {
  const u = updateOf(r);
  if (u) {
    if (u.surface !== undefined && u.surface !== current.doc.surface) {
      throw new Error(`the update is for surface “${u.surface}”, not “${current.doc.surface}”`);
    }
    const raw = applyPatch(current.raw, u.patch);
    const n = normalizeDocument(raw);
    if (!n.ok) throw new Error(`the patched document is not usable: ${n.error}`);
    return { documentId: r.a2ui?.document_id ?? current.documentId, raw, doc: n.doc };
  }
  return shownFromReply(r);
}
