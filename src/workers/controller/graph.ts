// /graph (throughput per action) and /pie.

import { GRAPH_ARCHIVES, GRAPH_TYPE_ALIASES, type GraphType } from '../../observability/graph.js';
import type { CoreContext } from './core-context.js';
import { controllerError, dbl, jsonReply } from './json.js';
import type { ControllerRoute } from './types.js';

const PIE: ReadonlyArray<{ label: string; color: string; actions: number[] }> = [
  { label: 'Clean', color: '#66cc00', actions: [5] },
  { label: 'Temporarily rejected', color: '#cc9966', actions: [1] },
  { label: 'Probable spam', color: '#FFD700', actions: [3, 2] },
  { label: 'Greylisted', color: '#436EEE', actions: [4] },
  { label: 'Rejected', color: '#FF0000', actions: [0] },
];

export function graphRoutes(ctx: CoreContext): ControllerRoute[] {
  return [
    {
      path: '/graph',
      level: 'normal',
      async handler(req) {
        const raw = req.query.get('type');
        if (raw === undefined || raw === '') return controllerError(400, 'Absent graph type');
        const t = raw.toLowerCase();
        const type: GraphType | undefined = t in GRAPH_ARCHIVES ? (t as GraphType) : GRAPH_TYPE_ALIASES[t];
        if (!type) return controllerError(400, 'Invalid graph type');
        const series = await ctx.stats.view.graph(type);
        return jsonReply(series.map((s) => s.map((p) => ({ x: p.x, y: p.y === null ? null : dbl(p.y) }))));
      },
    },
    {
      path: '/pie',
      level: 'normal',
      async handler() {
        const st = (await ctx.stats.view.snapshot()).state;
        return jsonReply(
          PIE.map((p) => {
            const v = p.actions.reduce((n, i) => n + (st.actions[i] ?? 0), 0);
            return { color: p.color, label: p.label, data: dbl(v), value: dbl(v) };
          }),
        );
      },
    },
  ];
}
