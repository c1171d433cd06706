import { Fragment, type ReactNode } from 'react';

// A small markdown renderer (facts §9.1): headings # to ####, "-" and "*"
// lists, "1." lists, paragraphs, inline code, bold, italic and links whose
// target is http, https, mailto or a "/"-relative path (anything else shows
// as plain text). There is no HTML: the input is parsed into a tree and
// rendered as React elements, so "<script>" is text like any other.

export type Inline =
  | { t: 'text'; v: string }
  | { t: 'code'; v: string }
  | { t: 'strong'; c: Inline[] }
  | { t: 'em'; c: Inline[] }
  | { t: 'link'; href: string; c: Inline[] };

export type Block =
  | { t: 'heading'; level: 1 | 2 | 3 | 4; c: Inline[] }
  | { t: 'ul'; items: Inline[][] }
  | { t: 'ol'; items: Inline[][] }
  | { t: 'p'; c: Inline[] };

/** Whether href may be a link: http, https, mailto or "/"-relative (not "//"). */
export function safeHref(href: string): boolean {
  const h = href.trim();
  if (/^\/(?![/\\])/.test(h)) return true;
  return /^(https?:\/\/[^\s]+|mailto:[^\s]+)$/i.test(h);
}

const MAX_INLINE_DEPTH = 4;

/** The index of the ")" that closes a link target starting at from, counting nested parentheses; -1 if none. */
function closingParen(s: string, from: number): number {
  let depth = 0;
  for (let i = from; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

function pushText(out: Inline[], v: string) {
  const last = out[out.length - 1];
  if (last && last.t === 'text') last.v += v;
  else if (v) out.push({ t: 'text', v });
}

/** Parses inline markup: `code`, **bold**, __bold__, *em*, _em_, [text](href). */
export function parseInline(s: string, depth = 0): Inline[] {
  const out: Inline[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === '`') {
      const end = s.indexOf('`', i + 1);
      if (end > i + 1) {
        out.push({ t: 'code', v: s.slice(i + 1, end) });
        i = end + 1;
        continue;
      }
    }
    if (depth < MAX_INLINE_DEPTH && (s.startsWith('**', i) || s.startsWith('__', i))) {
      const m = s.slice(i, i + 2);
      let end = s.indexOf(m, i + 2);
      while (end > 0 && s[end - 1] === ' ') end = s.indexOf(m, end + 1);
      // "***" closes an inner emphasis first: **a *b***.
      while (end > 0 && s[end + 2] === m[0]) end++;
      if (end > i + 2 && s[i + 2] !== ' ') {
        out.push({ t: 'strong', c: parseInline(s.slice(i + 2, end), depth + 1) });
        i = end + 2;
        continue;
      }
    }
    if (depth < MAX_INLINE_DEPTH && (c === '*' || c === '_') && s[i + 1] !== c && s[i + 1] !== ' ' && !(c === '_' && /[A-Za-z0-9]/.test(s[i - 1] ?? ''))) {
      // The closing marker is not doubled and not after a space.
      let end = i + 1;
      while ((end = s.indexOf(c, end)) > 0 && (s[end + 1] === c || s[end - 1] === ' ')) end += s[end + 1] === c ? 2 : 1;
      if (end > i + 1) {
        out.push({ t: 'em', c: parseInline(s.slice(i + 1, end), depth + 1) });
        i = end + 1;
        continue;
      }
    }
    if (c === '[' && depth < MAX_INLINE_DEPTH) {
      const close = s.indexOf('](', i + 1);
      const paren = close < 0 ? -1 : closingParen(s, close + 2);
      if (close > i && paren > close) {
        const text = s.slice(i + 1, close);
        const href = s.slice(close + 2, paren).trim();
        const inner = parseInline(text, depth + 1);
        if (safeHref(href)) out.push({ t: 'link', href, c: inner });
        else inner.forEach((n) => (n.t === 'text' ? pushText(out, n.v) : out.push(n)));
        i = paren + 1;
        continue;
      }
    }
    pushText(out, c);
    i++;
  }
  return out;
}

/** Parses markdown into blocks. */
export function parseMarkdown(src: string): Block[] {
  const blocks: Block[] = [];
  let para: string[] = [];
  let list: { t: 'ul' | 'ol'; items: Inline[][] } | null = null;
  const flush = () => {
    if (para.length) blocks.push({ t: 'p', c: parseInline(para.join(' ')) });
    para = [];
    if (list) blocks.push(list);
    list = null;
  };
  for (const rawLine of src.replace(/\r\n?/g, '\n').split('\n')) {
    const line = rawLine.trim();
    if (line === '') {
      flush();
      continue;
    }
    const h = /^(#{1,4})\s+(.*)$/.exec(line);
    if (h) {
      flush();
      blocks.push({ t: 'heading', level: h[1].length as 1 | 2 | 3 | 4, c: parseInline(h[2].replace(/\s+#+\s*$/, '')) });
      continue;
    }
    const ul = /^[-*]\s+(.*)$/.exec(line);
    const ol = ul ? null : /^\d{1,9}[.)]\s+(.*)$/.exec(line);
    if (ul || ol) {
      const kind = ul ? 'ul' : 'ol';
      if (para.length || (list && list.t !== kind)) flush();
      if (!list) list = { t: kind, items: [] };
      list.items.push(parseInline((ul ?? ol)![1]));
      continue;
    }
    if (list) flush();
    para.push(line);
  }
  flush();
  return blocks;
}

function renderInline(nodes: Inline[]): ReactNode {
  return nodes.map((n, i) => {
    switch (n.t) {
      case 'text':
        return <Fragment key={i}>{n.v}</Fragment>;
      case 'code':
        return <code key={i}>{n.v}</code>;
      case 'strong':
        return <strong key={i}>{renderInline(n.c)}</strong>;
      case 'em':
        return <em key={i}>{renderInline(n.c)}</em>;
      case 'link': {
        const external = !n.href.startsWith('/');
        return (
          <a key={i} href={n.href} rel={external ? 'noopener noreferrer nofollow' : undefined} target={external ? '_blank' : undefined}>
            {renderInline(n.c)}
          </a>
        );
      }
    }
    return null;
  });
}

/** Renders markdown source as React elements. */
export function Markdown({ source }: { source: string }) {
  const blocks = parseMarkdown(source);
  return (
    <>
      {blocks.map((b, i) => {
        switch (b.t) {
          case 'heading': {
            // Inside a result the page already has h1/h2: start at h3.
            const Tag = (['h3', 'h4', 'h5', 'h6'] as const)[b.level - 1];
            return <Tag key={i}>{renderInline(b.c)}</Tag>;
          }
          case 'ul':
            return (
              <ul key={i}>
                {b.items.map((it, j) => (
                  <li key={j}>{renderInline(it)}</li>
                ))}
              </ul>
            );
          case 'ol':
            return (
              <ol key={i}>
                {b.items.map((it, j) => (
                  <li key={j}>{renderInline(it)}</li>
                ))}
              </ol>
            );
          case 'p':
            return <p key={i}>{renderInline(b.c)}</p>;
        }
        return null;
      })}
    </>
  );
}
