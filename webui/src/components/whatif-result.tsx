// The what-if answer: how many stored scans a proposal moves, where to, and which ones. The
// What-if page and the Symbols page both preview their proposals with it (POST /whatif).

import type { WhatifAnswer } from '../api';
import { actionClass, fmtScore, fmtTime } from '../format';

/** Changed scans listed under the count; the count covers them all. */
const LISTED = 100;

export function WhatifResult({ answer }: { answer: WhatifAnswer }) {
  return (
    <section class="panel" aria-labelledby="whatif-result-h" aria-live="polite">
      <h2 id="whatif-result-h">
        <span data-testid="whatif-changed">{answer.changed}</span> of {answer.rows} stored scans would change action
      </h2>
      {answer.fixed > 0 && (
        <p class="muted">
          {answer.fixed === 1 ? '1 scan had its action' : `${answer.fixed} scans had their action`} forced by a module or skipped the rules; it stays.
        </p>
      )}
      {Object.keys(answer.moves).length > 0 && (
        <ul>
          {Object.entries(answer.moves).map(([m, n]) => (
            <li key={m}>
              {m.replace(' -> ', ' → ')}: {n}
            </li>
          ))}
        </ul>
      )}
      {answer.changes.length > 0 && (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Subject</th>
                <th scope="col" class="num">Score</th>
                <th scope="col">Action when scanned</th>
                <th scope="col">Would be</th>
              </tr>
            </thead>
            <tbody>
              {answer.changes.slice(0, LISTED).map((c) => (
                <tr key={c.index}>
                  <td class="nowrap">{fmtTime(c.unix_time)}</td>
                  <td class="wrap">{c.subject ?? c['message-id'] ?? ''}</td>
                  <td class="num">
                    {fmtScore(c.score_before)}
                    {c.score_after !== c.score_before && ` → ${fmtScore(c.score_after)}`}
                  </td>
                  <td>
                    <span class={actionClass(c.action_before)}>{c.action_before}</span>
                  </td>
                  <td>
                    <span class={actionClass(c.action_after)}>{c.action_after}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
