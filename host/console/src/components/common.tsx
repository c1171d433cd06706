import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent, type ReactNode } from 'react';
import { ApiError } from '../api/client';

// Small shared pieces: result banners, the confirmation dialog, JSON views,
// status badges, time formatting.

export interface BannerState {
  kind: 'success' | 'error' | 'info';
  title: string;
  message?: string;
  details?: unknown;
}

/** A banner for an error: the API's code and message. */
export function errorBanner(title: string, e: unknown): BannerState {
  if (e instanceof ApiError) {
    return { kind: 'error', title, message: `${e.code}: ${e.message}${e.requestId ? ` (request ${e.requestId})` : ''}`, details: e.details };
  }
  return { kind: 'error', title, message: e instanceof Error ? e.message : String(e) };
}

export function Banner({ banner, onClose }: { banner: BannerState | null; onClose?: () => void }) {
  // The live region is always there so that screen readers announce what
  // appears in it.
  return (
    <div aria-live={banner?.kind === 'error' ? 'assertive' : 'polite'} role={banner?.kind === 'error' ? 'alert' : 'status'} className="banner-region">
      {banner ? (
        <div className={`banner banner-${banner.kind}`} data-testid="banner" data-kind={banner.kind}>
          <div className="banner-body">
            <strong data-testid="banner-title">{banner.title}</strong>
            {banner.message ? <p data-testid="banner-message">{banner.message}</p> : null}
            {banner.details !== undefined && banner.details !== null ? (
              <details>
                <summary>Details</summary>
                <JsonView value={banner.details} />
              </details>
            ) : null}
          </div>
          {onClose ? (
            <button type="button" className="secondary small" onClick={onClose} aria-label="Dismiss the message">
              Dismiss
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

export function JsonView({ value, testId }: { value: unknown; testId?: string }) {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? 'undefined';
  } catch {
    text = String(value);
  }
  return (
    <pre className="json" data-testid={testId} tabIndex={0}>
      {text}
    </pre>
  );
}

export function Badge({ value }: { value: string | undefined }) {
  const v = value || 'unknown';
  const tone =
    v === 'active' || v === 'pinned' || v === 'trusted' || v === 'pass' || v === 'running' || v === 'ready' || v === 'enabled' || v === 'live'
      ? 'good'
      : v === 'quarantined' || v === 'fail' || v === 'crashlooping' || v === 'error' || v === 'disabled' || v === 'missing' || v === 'lost'
        ? 'bad'
        : v === 'warn' || v === 'warning' || v === 'tofu' || v === 'tofu_pinned'
          ? 'warn'
          : 'neutral';
  return <span className={`badge badge-${tone}`}>{v}</span>;
}

/**
 * A size for people: bytes below 1 KiB, else KiB, MiB or GiB (powers of
 * 1024) with one decimal unless the size is a whole number of the unit.
 */
export function humanBytes(n: number | undefined | null): string {
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return '—';
  if (n < 1024) return `${n} byte${n === 1 ? '' : 's'}`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[u]}`;
}

export function time(v: string | number | undefined): string {
  if (v === undefined || v === '' || v === 0) return '—';
  const d = new Date(v);
  if (Number.isNaN(d.getTime()) || d.getFullYear() < 2000) return '—';
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * A modal confirmation: focus moves into it and stays there (Tab cycles),
 * Esc or Cancel closes it, and focus goes back to what opened it.
 */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  danger,
  canConfirm = true,
  onConfirm,
  onClose,
}: {
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  canConfirm?: boolean;
  onConfirm: () => Promise<void> | void;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    const first = ref.current?.querySelector<HTMLElement>('[data-autofocus]') ?? ref.current?.querySelector<HTMLElement>(FOCUSABLE);
    first?.focus();
    return () => opener?.focus?.();
  }, []);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.stopPropagation();
      if (!busy) onClose();
      return;
    }
    if (e.key !== 'Tab' || !ref.current) return;
    const els = Array.from(ref.current.querySelectorAll<HTMLElement>(FOCUSABLE));
    if (els.length === 0) return;
    const first = els[0];
    const last = els[els.length - 1];
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!canConfirm || busy) return;
    setBusy(true);
    try {
      await onConfirm();
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="modal-backdrop">
      <div ref={ref} className="modal" role="dialog" aria-modal="true" aria-labelledby="confirm-title" onKeyDown={onKeyDown} data-testid="confirm-dialog">
        <form onSubmit={submit} noValidate>
          <h2 id="confirm-title">{title}</h2>
          {children}
          <div className="modal-actions">
            <button type="button" className="secondary" onClick={onClose} disabled={busy} data-testid="confirm-cancel">
              Cancel
            </button>
            <button type="submit" className={danger ? 'danger' : undefined} disabled={!canConfirm || busy} data-testid="confirm-ok">
              {busy ? 'Working…' : confirmLabel}
            </button>
          </div>
        </form>
      </div>
    </div>
  );
}

/** Loads data with an AbortController; reload() fetches again. */
export function useLoad<T>(fn: (signal: AbortSignal) => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [n, setN] = useState(0);
  useEffect(() => {
    const ac = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    fn(ac.signal).then(
      (data) => !ac.signal.aborted && setState({ data, loading: false }),
      (error) => !ac.signal.aborted && setState({ error, loading: false }),
    );
    return () => ac.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, n]);
  return { ...state, reload: () => setN((x) => x + 1) };
}

export function LoadError({ error, what }: { error: unknown; what: string }) {
  const b = errorBanner(`Could not load ${what}`, error);
  return (
    <div className="banner banner-error" role="alert" data-testid="load-error">
      <div className="banner-body">
        <strong>{b.title}</strong>
        <p>{b.message}</p>
      </div>
    </div>
  );
}
