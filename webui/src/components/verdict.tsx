// The verdict explanation of one history row: every symbol with score, group, description and
// options; group limits that cut scores; composites and what they consumed; settings that
// applied; how far the score sat from each threshold. The scan-and-learn page (to come) shows
// its results with this same component.

import { useEffect, useRef } from 'preact/hooks';
import type { HistoryRow } from '../api';
import { actionClass, fmtScore, fmtSigned, fmtTime } from '../format';

export function Verdict({ row, currentThresholds }: { row: HistoryRow; currentThresholds: Record<string, number> }) {
  const ex = row.explain ?? {};
  const thresholds = ex.thresholds ?? currentThresholds;
  const symbols = Object.entries(row.symbols)
    .map(([name, s]) => ({ ...s, name }))
    .sort((a, b) => Math.abs(b.score) - Math.abs(a.score) || a.name.localeCompare(b.name));
  const consumedBy = new Map<string, string>();
  for (const [c, list] of Object.entries(ex.composites ?? {})) for (const s of list) consumedBy.set(s, c);
  const thresholdList = Object.entries(thresholds).sort((a, b) => b[1] - a[1]);
  // Opening an explanation moves focus (and the view) to it: keyboard and screen reader users land on it.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
    heading.current?.scrollIntoView({ block: 'start' });
  }, [row]);
  return (
    <article class="verdict" aria-labelledby="verdict-h" data-testid="verdict">
      <h2 id="verdict-h" ref={heading} tabIndex={-1}>
        Why <span class={actionClass(row.action)}>{row.action}</span> at {fmtScore(row.score)}
      </h2>
      <p class="muted">
        {row.subject} · {row['message-id'] ?? 'no Message-ID'} · {fmtTime(row.unix_time)} · from {row.sender_smtp} ({row.ip})
      </p>
      {ex.forced && (
        <p class="notice">
          The action was forced by <strong>{ex.forced}</strong> (a pre-result): thresholds did not decide it.
        </p>
      )}
      {row.is_skipped && <p class="notice">The scan was skipped: no rules ran.</p>}

      <h3>Distance from each threshold</h3>
      {thresholdList.length === 0 ? (
        <p class="muted">Every threshold was off for this scan.</p>
      ) : (
        <ul class="thresholds" data-testid="threshold-distance">
          {thresholdList.map(([name, t]) => {
            const d = row.score - t;
            return (
              <li key={name}>
                <span class={actionClass(name)}>{name}</span> at {fmtScore(t)}: {d >= 0 ? `reached, ${fmtScore(d)} above` : `${fmtScore(-d)} below`}
              </li>
            );
          })}
        </ul>
      )}

      <h3>Symbols</h3>
      <div class="scroll">
        <table data-testid="verdict-symbols">
          <thead>
            <tr>
              <th scope="col">Symbol</th>
              <th scope="col" class="num">Score</th>
              <th scope="col" class="num wide-only">Weight</th>
              <th scope="col">Group</th>
              <th scope="col">Description and options</th>
            </tr>
          </thead>
          <tbody>
            {symbols.map((s) => (
              <tr key={s.name} class={consumedBy.has(s.name) ? 'consumed' : ''}>
                <td>
                  <code>{s.name}</code>
                  {consumedBy.has(s.name) && <span class="muted"> (consumed by {consumedBy.get(s.name)})</span>}
                </td>
                <td class={`num ${s.score > 0 ? 'pos' : s.score < 0 ? 'neg' : ''}`}>{fmtSigned(s.score)}</td>
                <td class="num muted wide-only">{fmtScore(s.metric_score)}</td>
                <td>{s.group ?? '–'}</td>
                <td class="wrap">
                  {s.description}
                  {s.options?.length ? <div class="options">{s.options.join(', ')}</div> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <h3>Group limits</h3>
      {ex.capped_groups?.length ? (
        <p>The score limit of {ex.capped_groups.map((g) => <code key={g}>{g} </code>)} cut some contributions: those symbols count less (or 0) than weight × factor.</p>
      ) : (
        <p class="muted">No group limit applied.</p>
      )}

      <h3>Composites</h3>
      {ex.composites && Object.keys(ex.composites).length ? (
        <ul>
          {Object.entries(ex.composites).map(([c, list]) => (
            <li key={c}>
              <code>{c}</code> fired and consumed {list.map((s) => <code key={s}>{s} </code>)}
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No composite consumed a symbol.</p>
      )}

      <h3>Settings</h3>
      {ex.settings ? (
        <ul>
          {ex.settings.id && <li>Settings id <code>{ex.settings.id}</code></li>}
          {ex.settings.actions && <li>Thresholds replaced: {Object.entries(ex.settings.actions).map(([a, v]) => `${a} ${v === null ? 'off' : v}`).join(', ')}</li>}
          {ex.settings.scores && <li>Scores replaced for {ex.settings.scores.join(', ')}</li>}
          {ex.settings.whitelist && <li>Whitelisted: no rules ran</li>}
          {ex.settings.symbols_limited && <li>Only some symbols were allowed to run</li>}
        </ul>
      ) : (
        <p class="muted">No settings applied.</p>
      )}
    </article>
  );
}
