// Throughput per action as stacked-free lines in SVG (no chart library: six series of at most
// ~500 points each). Colours come from CSS variables, so light and dark themes both work.

import type { GraphPoint } from '../api';

export interface Series {
  label: string;
  cssVar: string;
  points: GraphPoint[];
}

const W = 800;
const H = 240;
const PAD = { l: 44, r: 8, t: 8, b: 24 };

/** Points with a value whose neighbours have none. */
function isolated(pts: GraphPoint[]): GraphPoint[] {
  return pts.filter((p, i) => p.y !== null && (pts[i - 1]?.y ?? null) === null && (pts[i + 1]?.y ?? null) === null);
}

export function LineChart({ series, title }: { series: Series[]; title: string }) {
  const xs = series.flatMap((s) => s.points.map((p) => p.x));
  const ys = series.flatMap((s) => s.points.map((p) => p.y ?? 0));
  if (xs.length === 0) return <p class="muted">No data yet.</p>;
  const x0 = Math.min(...xs);
  const x1 = Math.max(...xs);
  const yMax = Math.max(1e-9, ...ys);
  const sx = (x: number) => PAD.l + ((x - x0) / Math.max(1, x1 - x0)) * (W - PAD.l - PAD.r);
  const sy = (y: number) => H - PAD.b - (y / yMax) * (H - PAD.t - PAD.b);
  const path = (pts: GraphPoint[]) => {
    let d = '';
    let pen = false;
    for (const p of pts) {
      if (p.y === null) {
        pen = false;
        continue;
      }
      d += `${pen ? 'L' : 'M'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`;
      pen = true;
    }
    return d;
  };
  const ticks = [0, 0.5, 1].map((f) => f * yMax);
  const fmtX = (x: number) => new Date(x * 1000).toLocaleString('en-GB', { hour12: false, month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title} preserveAspectRatio="none">
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.l} x2={W - PAD.r} y1={sy(t)} y2={sy(t)} class="grid" />
            <text x={PAD.l - 4} y={sy(t) + 4} text-anchor="end" class="axis">
              {t < 10 ? t.toFixed(2) : Math.round(t)}
            </text>
          </g>
        ))}
        <text x={PAD.l} y={H - 6} class="axis">{fmtX(x0)}</text>
        <text x={W - PAD.r} y={H - 6} text-anchor="end" class="axis">{fmtX(x1)}</text>
        {series.map((s) => (
          <path key={s.label} d={path(s.points)} fill="none" stroke={`var(${s.cssVar})`} stroke-width="2" vector-effect="non-scaling-stroke" />
        ))}
        {/* A point with no neighbour draws no line: mark it (a server up for a minute has one). */}
        {series.flatMap((s) =>
          isolated(s.points).map((p) => <circle key={`${s.label}-${p.x}`} cx={sx(p.x)} cy={sy(p.y ?? 0)} r="3" fill={`var(${s.cssVar})`} />),
        )}
      </svg>
      <figcaption class="legend">
        {series.map((s) => (
          <span key={s.label}>
            <i style={{ background: `var(${s.cssVar})` }} aria-hidden="true" /> {s.label}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
