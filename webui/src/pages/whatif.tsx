// What-if: propose action thresholds and symbol weights, see over the stored history how many
// scans would change action (the controller computes it: POST /whatif), then save through
// /saveactions and /savesymbols. The server's refusal is shown next to the form.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, SAVED_ACTIONS, type WhatifAnswer, type WhatifProposal } from '../api';
import { Problem } from '../components/problem';
import { useAsync } from '../components/use-async';
import { actionClass, fmtScore, fmtTime } from '../format';
import type { PageProps } from '../session';

/** Changed scans listed under the count; the count covers them all. */
const LISTED = 100;

export function WhatifPage({ api, session }: PageProps) {
  const actions = useAsync(() => api.actions(), [api]);
  const symbols = useAsync(() => api.symbols(), [api]);
  /** Threshold inputs as typed ('' = off), by action. */
  const [thresholds, setThresholds] = useState<Record<string, string>>({});
  /** Symbol → weight as typed. */
  const [weights, setWeights] = useState<Record<string, string>>({});
  const [pick, setPick] = useState('');
  const [answer, setAnswer] = useState<WhatifAnswer | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const current = useMemo(() => new Map((actions.data ?? []).map((a) => [a.action, a.value])), [actions.data]);
  const weightOf = useMemo(() => new Map((symbols.data ?? []).flatMap((g) => g.rules.map((r) => [r.symbol, r.weight] as const))), [symbols.data]);
  useEffect(() => {
    if (!actions.data) return;
    const t: Record<string, string> = {};
    for (const a of SAVED_ACTIONS) t[a] = current.get(a) == null ? '' : String(current.get(a));
    setThresholds(t);
  }, [actions.data]);

  const proposal = (): WhatifProposal => {
    const p: WhatifProposal = { actions: SAVED_ACTIONS.map((a) => (thresholds[a] === '' || thresholds[a] === undefined ? null : Number(thresholds[a]))) };
    const list = Object.entries(weights).map(([name, v]) => ({ name, value: Number(v) }));
    if (list.length) p.symbols = list;
    return p;
  };
  const run = async (what: () => Promise<void>) => {
    setBusy(true);
    setProblem(undefined);
    setSaved(undefined);
    try {
      await what();
    } catch (err) {
      setProblem(err instanceof ApiError ? `${err.message} (HTTP ${err.status})` : String(err));
    } finally {
      setBusy(false);
    }
  };
  const preview = () => run(async () => setAnswer(await api.whatif(proposal())));
  const save = () =>
    run(async () => {
      const p = proposal();
      await api.saveActions(p.actions ?? []);
      if (p.symbols?.length) await api.saveSymbols(p.symbols);
      setSaved('Saved. Workers apply the change within a second.');
      actions.reload();
      symbols.reload();
      setWeights({});
    });

  if (actions.error) return <Problem error={actions.error} what="the actions" />;
  const names = [...weightOf.keys()].sort();
  return (
    <section aria-labelledby="whatif-h">
      <h1 id="whatif-h">What-if</h1>
      <p class="muted">Change thresholds or weights and preview their effect on the stored history before saving. The server recomputes each stored scan (forced actions stay as they were; group limits and composites are not re-evaluated).</p>
      <form
        class="panel whatif-form"
        onSubmit={(e) => {
          e.preventDefault();
          void preview();
        }}
      >
        <fieldset>
          <legend>Action thresholds (empty: off)</legend>
          <div class="fields">
            {SAVED_ACTIONS.map((a) => (
              <label key={a}>
                <span class={actionClass(a)}>{a}</span>
                <input
                  type="number"
                  step="any"
                  name={`threshold-${a}`}
                  value={thresholds[a] ?? ''}
                  onInput={(e) => setThresholds({ ...thresholds, [a]: e.currentTarget.value })}
                />
                <small class="muted">now {current.get(a) ?? 'off'}</small>
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend>Symbol weights</legend>
          <div class="fields">
            <label>
              Symbol
              <input list="whatif-symbols" value={pick} onInput={(e) => setPick(e.currentTarget.value)} />
              <datalist id="whatif-symbols">
                {names.map((n) => (
                  <option key={n} value={n} />
                ))}
              </datalist>
            </label>
            <button
              type="button"
              disabled={!weightOf.has(pick)}
              onClick={() => {
                setWeights({ ...weights, [pick]: String(weightOf.get(pick) ?? 0) });
                setPick('');
              }}
            >
              Add
            </button>
          </div>
          {Object.entries(weights).map(([name, v]) => (
            <div class="fields" key={name}>
              <label>
                <code>{name}</code> (now {weightOf.get(name)})
                <input type="number" step="any" value={v} onInput={(e) => setWeights({ ...weights, [name]: e.currentTarget.value })} />
              </label>
              <button
                type="button"
                aria-label={`Remove ${name}`}
                onClick={() => {
                  const { [name]: _, ...rest } = weights;
                  setWeights(rest);
                }}
              >
                Remove
              </button>
            </div>
          ))}
        </fieldset>
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy}>
            Preview
          </button>
          {!session.readOnly && (
            <button type="button" data-testid="whatif-save" disabled={busy} onClick={() => void save()}>
              Save
            </button>
          )}
        </div>
        {problem && (
          <p class="error" role="alert" data-testid="whatif-error">
            {problem}
          </p>
        )}
        {saved && (
          <p class="ok" role="status">
            {saved}
          </p>
        )}
      </form>

      {answer && (
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
      )}
    </section>
  );
}
