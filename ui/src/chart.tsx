/**
 * A line chart of one series, drawn as SVG: no chart library for a few polylines.
 * The x axis is the time shown (the last `windowMs`, or less while the series is
 * younger), the y axis starts at 0 and ends at the series' maximum, both labelled.
 */
import type { Point } from './flow.ts';

export interface ChartProps {
  points: readonly Point[];
  label: string;
  unit: string;
  windowMs?: number;
  now?: number;
}

const W = 360;
const H = 90;
const PAD = 4;

export function Chart({ points, label, unit, windowMs = 5 * 60_000, now }: ChartProps) {
  const end = now ?? (points.length > 0 ? points[points.length - 1]!.at : Date.now());
  // Until the series covers the window, the x axis spans what there is (at least 10 s).
  const first = points.find((p) => p.at >= end - windowMs)?.at ?? end;
  const span = Math.max(10_000, Math.min(windowMs, end - first));
  const start = end - span;
  const shown = points.filter((p) => p.at >= start);
  const max = Math.max(1, ...shown.map((p) => p.value));
  const x = (at: number) => PAD + ((at - start) / span) * (W - 2 * PAD);
  const y = (v: number) => H - PAD - (v / max) * (H - 2 * PAD);
  const path = shown.map((p) => `${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ');
  const last = shown[shown.length - 1];
  return (
    <figure class="chart">
      <figcaption>
        {label}: <strong>{last === undefined ? '–' : formatNumber(last.value)}</strong> {unit}
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={label}>
        <rect x="0" y="0" width={W} height={H} class="chart-bg" />
        <line x1={PAD} x2={W - PAD} y1={y(max)} y2={y(max)} class="chart-grid" />
        <text x={PAD + 2} y={y(max) + 11} class="chart-axis">
          {formatNumber(max)}
        </text>
        {shown.length > 1 ? <polyline points={path} class="chart-line" /> : null}
        <text x={W - PAD - 2} y={H - PAD - 2} class="chart-axis" text-anchor="end">
          last{' '}
          {span >= 60_000 ? `${Math.round(span / 60_000)} min` : `${Math.round(span / 1000)} s`}
        </text>
      </svg>
    </figure>
  );
}

export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 100 || Number.isInteger(n)) return Math.round(n).toLocaleString('en-US');
  return n.toFixed(Math.abs(n) >= 10 ? 1 : 2);
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}
