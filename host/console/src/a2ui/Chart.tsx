import type { ChartKind, ChartPoint } from './types';

// Charts drawn as SVG of our own: bar, line and pie. The SVG is one image
// for assistive technology (role="img" with a label that says what it
// shows); the numbers are in a visually hidden table next to it.

const W = 480;
const H = 240;
const PAD = { top: 16, right: 16, bottom: 48, left: 56 };
/** Colours with at least 3:1 contrast against white (graphics, WCAG 1.4.11). */
export const PALETTE = ['#1f5fa8', '#b8461b', '#2b7a3d', '#7b3fa0', '#9a6a00', '#0f7c86', '#b02a5b', '#555555'];

export function chartLabel(title: string, kind: ChartKind, series: ChartPoint[]): string {
  const pts = series.map((p) => `${p.label} ${fmt(p.value)}`).join(', ');
  return `${title}: ${kind} chart of ${series.length} value${series.length === 1 ? '' : 's'}${pts ? ': ' + pts : ''}`;
}

export function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2).replace(/0+$/, '').replace(/\.$/, '');
}

/** Rounds the top of the value axis up to 1, 2 or 5 × 10^k. */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(max)));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

/**
 * The ticks of a value axis from 0 up to at least max: at most about five
 * steps of 1, 2 or 5 × 10^k. With integer set (counts: every value is a
 * whole number) the step is a whole number too, so the axis never reads
 * 2.5 or 7.5 calls.
 */
export function axisTicks(max: number, integer: boolean): number[] {
  const m = Number.isFinite(max) && max > 0 ? max : 1;
  const raw = m / 4;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  let step = 10 * p;
  for (const k of [1, 2, 5, 10]) {
    if (k * p >= raw) {
      step = k * p;
      break;
    }
  }
  if (integer) step = Math.max(1, Math.round(step));
  const n = Math.max(1, Math.ceil(m / step - 1e-9));
  return Array.from({ length: n + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

/** Whether every value is a whole number (then the axis is of counts). */
export function allIntegers(series: ChartPoint[]): boolean {
  return series.every((p) => Number.isInteger(p.value));
}

/**
 * A category label in at most two lines of width characters, broken after
 * a space, dot, dash, underscore or slash where it can be; cut with an
 * ellipsis only when two lines are not enough (truncated tells, and the
 * label then gets a <title> with the whole text).
 */
export function labelLines(label: string, width: number): { lines: string[]; truncated: boolean } {
  const w = Math.max(3, Math.floor(width));
  if (label.length <= w) return { lines: [label], truncated: false };
  let cut = -1;
  for (let i = Math.min(w, label.length - 1); i > 0; i--) {
    if (/[\s./_-]/.test(label[i - 1])) {
      cut = i;
      break;
    }
  }
  if (cut <= 0) cut = w;
  const first = label.slice(0, cut).trimEnd();
  const rest = label.slice(cut).trimStart();
  if (rest.length <= w) return { lines: [first, rest], truncated: false };
  return { lines: [first, rest.slice(0, w - 1) + '…'], truncated: true };
}

function short(s: string, n = 12): string {
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

/** The label under a bar or point: up to two lines, the whole text as its <title> when cut. */
function CategoryLabel({ x, label, slot }: { x: number; label: string; slot: number }) {
  // 11px text is about 6.2 user units a character.
  const { lines, truncated } = labelLines(label, slot / 6.2);
  return (
    <text x={x} y={H - PAD.bottom + 16} textAnchor="middle" className="chart-tick" data-testid="chart-label">
      {truncated ? <title>{label}</title> : null}
      {lines.map((l, i) => (
        <tspan key={i} x={x} dy={i === 0 ? 0 : 13}>
          {l}
        </tspan>
      ))}
    </text>
  );
}

function Axes({ ticks }: { ticks: number[] }) {
  const top = ticks[ticks.length - 1];
  const ih = H - PAD.top - PAD.bottom;
  return (
    <g className="chart-axes">
      {ticks.map((t) => {
        const y = PAD.top + ih * (1 - t / top);
        return (
          <g key={t}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y} y2={y} className="chart-grid" />
            <text x={PAD.left - 6} y={y + 4} textAnchor="end" className="chart-tick" data-testid="chart-value-tick">
              {fmt(t)}
            </text>
          </g>
        );
      })}
      <line x1={PAD.left} x2={PAD.left} y1={PAD.top} y2={H - PAD.bottom} className="chart-axis" />
      <line x1={PAD.left} x2={W - PAD.right} y1={H - PAD.bottom} y2={H - PAD.bottom} className="chart-axis" />
    </g>
  );
}

function Bars({ series }: { series: ChartPoint[] }) {
  const ticks = axisTicks(Math.max(0, ...series.map((p) => p.value)), allIntegers(series));
  const top = ticks[ticks.length - 1];
  const iw = W - PAD.left - PAD.right;
  const ih = H - PAD.top - PAD.bottom;
  const slot = iw / Math.max(1, series.length);
  const bw = Math.max(2, slot * 0.7);
  return (
    <>
      <Axes ticks={ticks} />
      {series.map((p, i) => {
        const h = (p.value / top) * ih;
        const x = PAD.left + slot * i + (slot - bw) / 2;
        return (
          <g key={i} data-testid="chart-bar">
            <rect x={x} y={PAD.top + ih - h} width={bw} height={h} fill={PALETTE[i % PALETTE.length]} />
            <CategoryLabel x={x + bw / 2} label={p.label} slot={slot} />
          </g>
        );
      })}
    </>
  );
}

function Line({ series }: { series: ChartPoint[] }) {
  const ticks = axisTicks(Math.max(0, ...series.map((p) => p.value)), allIntegers(series));
  const top = ticks[ticks.length - 1];
  const iw = W - PAD.left - PAD.right;
  const ih = H - PAD.top - PAD.bottom;
  const step = series.length > 1 ? iw / (series.length - 1) : 0;
  const pts = series.map((p, i) => [PAD.left + (series.length > 1 ? step * i : iw / 2), PAD.top + ih - (p.value / top) * ih] as const);
  return (
    <>
      <Axes ticks={ticks} />
      <polyline points={pts.map(([x, y]) => `${x},${y}`).join(' ')} fill="none" stroke={PALETTE[0]} strokeWidth={2} data-testid="chart-line" />
      {pts.map(([x, y], i) => (
        <g key={i}>
          <circle cx={x} cy={y} r={4} fill={PALETTE[0]} data-testid="chart-point" />
          <CategoryLabel x={x} label={series[i].label} slot={series.length > 1 ? step : iw} />
        </g>
      ))}
    </>
  );
}

/** The SVG path of a pie slice from angle a0 to a1 (radians, 0 = 12 o'clock). */
export function slicePath(cx: number, cy: number, r: number, a0: number, a1: number): string {
  const x0 = cx + r * Math.sin(a0);
  const y0 = cy - r * Math.cos(a0);
  const x1 = cx + r * Math.sin(a1);
  const y1 = cy - r * Math.cos(a1);
  const large = a1 - a0 > Math.PI ? 1 : 0;
  const f = (n: number) => n.toFixed(3);
  return `M ${f(cx)} ${f(cy)} L ${f(x0)} ${f(y0)} A ${r} ${r} 0 ${large} 1 ${f(x1)} ${f(y1)} Z`;
}

function Pie({ series }: { series: ChartPoint[] }) {
  const total = series.reduce((s, p) => s + p.value, 0);
  const cx = 120;
  const cy = H / 2;
  const r = 96;
  let a = 0;
  return (
    <>
      {total <= 0 ? (
        <circle cx={cx} cy={cy} r={r} fill="none" stroke="#767676" data-testid="chart-empty" />
      ) : (
        series.map((p, i) => {
          if (p.value <= 0) return null;
          const a0 = a;
          a += (p.value / total) * 2 * Math.PI;
          const fill = PALETTE[i % PALETTE.length];
          return p.value === total ? (
            <circle key={i} cx={cx} cy={cy} r={r} fill={fill} data-testid="chart-slice" />
          ) : (
            <path key={i} d={slicePath(cx, cy, r, a0, a)} fill={fill} stroke="#ffffff" data-testid="chart-slice" />
          );
        })
      )}
      {series.slice(0, 10).map((p, i) => (
        <g key={`l${i}`}>
          <rect x={250} y={20 + i * 20} width={12} height={12} fill={PALETTE[i % PALETTE.length]} />
          <text x={268} y={31 + i * 20} className="chart-tick">
            {p.label.length > 26 ? <title>{p.label}</title> : null}
            {short(p.label, 26)} ({total > 0 ? Math.round((p.value / total) * 100) : 0}%)
          </text>
        </g>
      ))}
    </>
  );
}

export function Chart({ title, kind, series }: { title: string; kind: ChartKind; series: ChartPoint[] }) {
  return (
    <figure className="a2ui-chart" data-testid="a2ui-chart" data-kind={kind}>
      <figcaption>{title}</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={chartLabel(title, kind, series)} className="chart-svg">
        {series.length === 0 ? (
          <text x={W / 2} y={H / 2} textAnchor="middle" className="chart-tick">
            No data
          </text>
        ) : kind === 'line' ? (
          <Line series={series} />
        ) : kind === 'pie' ? (
          <Pie series={series} />
        ) : (
          <Bars series={series} />
        )}
      </svg>
      <table className="visually-hidden" data-testid="chart-data">
        <caption>{title}: data</caption>
        <thead>
          <tr>
            <th scope="col">Label</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {series.map((p, i) => (
            <tr key={i}>
              <th scope="row">{p.label}</th>
              <td>{fmt(p.value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
