// The action pie in SVG, with the numbers beside it (the chart alone is not accessible).

export interface Slice {
  label: string;
  value: number;
  cssVar: string;
}

export function PieChart({ slices, title }: { slices: Slice[]; title: string }) {
  const total = slices.reduce((n, s) => n + s.value, 0);
  let angle = -Math.PI / 2;
  const arcs = slices
    .filter((s) => s.value > 0)
    .map((s) => {
      const a0 = angle;
      const a1 = angle + (s.value / total) * Math.PI * 2;
      angle = a1;
      const large = a1 - a0 > Math.PI ? 1 : 0;
      const p = (a: number) => `${(50 + 48 * Math.cos(a)).toFixed(2)},${(50 + 48 * Math.sin(a)).toFixed(2)}`;
      const d = s.value === total ? 'M50,2A48,48 0 1 1 49.99,2Z' : `M50,50L${p(a0)}A48,48 0 ${large} 1 ${p(a1)}Z`;
      return <path key={s.label} d={d} fill={`var(${s.cssVar})`} />;
    });
  return (
    <div class="pie">
      <svg viewBox="0 0 100 100" role="img" aria-label={title} width="140" height="140">
        {total === 0 ? <circle cx="50" cy="50" r="48" class="empty" /> : arcs}
      </svg>
      <table class="compact">
        <caption class="sr-only">{title}</caption>
        <tbody>
          {slices.map((s) => (
            <tr key={s.label}>
              <th scope="row">
                <i class="swatch" style={{ background: `var(${s.cssVar})` }} aria-hidden="true" /> {s.label}
              </th>
              <td class="num">{s.value.toLocaleString('en')}</td>
              <td class="num muted">{total ? `${((s.value / total) * 100).toFixed(1)}%` : ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
