// Symbols and actions: every symbol with its group, description, weight and the scan figures of
// /counters (hits, average time), searchable. An admin edits weights and action thresholds in
// place, previews the effect on the stored history with the What-if view (POST /whatif), and
// saves through /saveactions and /savesymbols; the server's refusal is shown beside the buttons.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, SAVED_ACTIONS, type WhatifAnswer, type WhatifProposal } from '../api';
import { Problem } from '../components/problem';
import { useAsync } from '../components/use-async';
import { WhatifResult } from '../components/whatif-result';
import { actionClass, fmtInt, fmtScore } from '../format';
import type { PageProps } from '../session';

/** Rows drawn until "Show all" is pressed (a full install has over a thousand symbols). */
const SHOWN = 100;

interface Row {
  symbol: string;
  group: string;
  description: string;
  weight: number;
  hits: number;
  /** Average seconds per hit. */
  time: number;
}

const sameNumber = (typed: string, now: number | null | undefined): boolean => (typed === '' ? now == null : now != null && Number(typed) === now);

export function SymbolsPage({ api, session }: PageProps) {
  const symbols = useAsync(() => api.symbols(), [api]);
  const counters = useAsync(() => api.counters(), [api]);
  const actions = useAsync(() => api.actions(), [api]);
  const [search, setSearch] = useState('');
  const [group, setGroup] = useState('');
  const [hitOnly, setHitOnly] = useState(false);
  const [all, setAll] = useState(false);
  /** Symbol → weight as typed, for the edited ones. */
  const [weights, setWeights] = useState<Record<string, string>>({});
  const [thresholds, setThresholds] = useState<Record<string, string>>({});
  const [answer, setAnswer] = useState<WhatifAnswer | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const current = useMemo(() => new Map((actions.data ?? []).map((a) => [a.action, a.value])), [actions.data]);
  useEffect(() => {
    const t: Record<string, string> = {};
    for (const a of SAVED_ACTIONS) t[a] = current.get(a) == null ? '' : String(current.get(a));
    setThresholds(t);
  }, [current]);

  const rows = useMemo((): Row[] => {
    const byName = new Map((counters.data ?? []).map((c) => [c.symbol, c]));
    return (symbols.data ?? [])
      .flatMap((g) => g.rules.map((r) => ({ symbol: r.symbol, group: g.group, description: r.description ?? '', weight: r.weight, hits: byName.get(r.symbol)?.hits ?? 0, time: byName.get(r.symbol)?.time ?? 0 })))
      .sort((a, b) => a.symbol.localeCompare(b.symbol));
  }, [symbols.data, counters.data]);
  const groups = useMemo(() => [...new Set(rows.map((r) => r.group))].sort(), [rows]);
  const needle = search.trim().toLowerCase();
  const matching = rows.filter((r) => (!group || r.group === group) && (!hitOnly || r.hits > 0) && (!needle || `${r.symbol} ${r.description}`.toLowerCase().includes(needle)));
  const weightOf = useMemo(() => new Map(rows.map((r) => [r.symbol, r.weight])), [rows]);

  const changedSymbols = Object.entries(weights).filter(([name, v]) => v !== '' && !sameNumber(v, weightOf.get(name)));
  const actionsChanged = SAVED_ACTIONS.some((a) => !sameNumber(thresholds[a] ?? '', current.get(a)));
  const proposal = (): WhatifProposal => ({
    actions: SAVED_ACTIONS.map((a) => (thresholds[a] ? Number(thresholds[a]) : null)),
    ...(changedSymbols.length ? { symbols: changedSymbols.map(([name, v]) => ({ name, value: Number(v) })) } : {}),
  });
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
      if (actionsChanged) await api.saveActions(p.actions ?? []);
      if (p.symbols) await api.saveSymbols(p.symbols);
      setSaved('Saved. Workers apply the change within a second.');
      setWeights({});
      setAnswer(undefined);
      actions.reload();
      symbols.reload();
    });

  if (symbols.error) return <Problem error={symbols.error} what="the symbols" />;
  const edits = changedSymbols.length + (actionsChanged ? 1 : 0);
  return (
    <section aria-labelledby="symbols-h">
      <div class="page-head">
        <h1 id="symbols-h">Symbols and actions</h1>
        <button type="button" onClick={() => (symbols.reload(), counters.reload(), actions.reload())}>
          Reload
        </button>
      </div>

      <section class="panel" aria-labelledby="actions-h">
        <h2 id="actions-h">Action thresholds</h2>
        {actions.error ? (
          <Problem error={actions.error} what="the actions" />
        ) : session.readOnly ? (
          <ul class="inline-list" data-testid="action-thresholds">
            {(actions.data ?? []).map((a) => (
              <li key={a.action}>
                <span class={actionClass(a.action)}>{a.action}</span> {a.value === null ? 'off' : fmtScore(a.value)}
              </li>
            ))}
          </ul>
        ) : (
          <div class="fields" data-testid="action-thresholds">
            {SAVED_ACTIONS.map((a) => (
              <label key={a}>
                <span class={actionClass(a)}>{a}</span>
                <input type="number" step="any" name={`sym-threshold-${a}`} value={thresholds[a] ?? ''} onInput={(e) => setThresholds({ ...thresholds, [a]: e.currentTarget.value })} />
                <small class="muted">now {current.get(a) ?? 'off'} (empty: off)</small>
              </label>
            ))}
          </div>
        )}
      </section>

      <form class="filters" role="search" aria-label="Filter the symbols" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input type="search" value={search} placeholder="name or description" onInput={(e) => setSearch(e.currentTarget.value)} />
        </label>
        <label>
          Group
          <select value={group} onChange={(e) => setGroup(e.currentTarget.value)}>
            <option value="">any</option>
            {groups.map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
        </label>
        <label class="inline">
          <input type="checkbox" checked={hitOnly} onChange={(e) => setHitOnly(e.currentTarget.checked)} /> Only symbols that fired
        </label>
      </form>
      {counters.error && <Problem error={counters.error} what="the hit counts" />}
      <p class="muted" aria-live="polite" data-testid="symbols-count">
        {symbols.loading && !symbols.data ? 'Loading…' : `${matching.length} of ${rows.length} symbols${matching.length > SHOWN && !all ? `; the first ${SHOWN} are shown` : ''}`}
        {matching.length > SHOWN && !all && (
          <>
            {' '}
            <button type="button" class="link" onClick={() => setAll(true)}>
              Show all
            </button>
          </>
        )}
      </p>
      <div class="scroll">
        <table data-testid="symbols-table">
          <thead>
            <tr>
              <th scope="col">Symbol</th>
              <th scope="col">Group</th>
              <th scope="col" class="hide-phone">Description</th>
              <th scope="col" class="num">Weight</th>
              <th scope="col" class="num">Hits</th>
              <th scope="col" class="num nowrap">Avg time</th>
            </tr>
          </thead>
          <tbody>
            {(all ? matching : matching.slice(0, SHOWN)).map((r) => {
              const typed = weights[r.symbol];
              const edited = typed !== undefined && typed !== '' && !sameNumber(typed, r.weight);
              return (
                <tr key={r.symbol} class={edited ? 'selected' : ''}>
                  <th scope="row">
                    <code>{r.symbol}</code>
                    {r.description && <div class="options show-phone">{r.description}</div>}
                  </th>
                  <td>{r.group}</td>
                  <td class="wrap hide-phone">{r.description}</td>
                  <td class="num">
                    {session.readOnly ? (
                      fmtScore(r.weight)
                    ) : (
                      <input
                        class="weight"
                        type="number"
                        step="any"
                        aria-label={`Weight of ${r.symbol}`}
                        data-symbol={r.symbol}
                        value={typed ?? String(r.weight)}
                        onInput={(e) => setWeights({ ...weights, [r.symbol]: e.currentTarget.value })}
                      />
                    )}
                  </td>
                  <td class="num">{fmtInt(r.hits)}</td>
                  <td class="num muted">{r.hits ? `${(r.time * 1000).toFixed(1)} ms` : '–'}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>

      {!session.readOnly && (
        <div class={`panel ${edits > 0 ? 'sticky-actions' : ''}`}>
          <p class="muted">
            {edits === 0 ? 'No change yet: edit a weight or a threshold.' : `Changed: ${[changedSymbols.length ? `${changedSymbols.length} weight${changedSymbols.length === 1 ? '' : 's'}` : '', actionsChanged ? 'the thresholds' : ''].filter(Boolean).join(' and ')}.`}
          </p>
          <div class="actions-row">
            <button type="button" class="primary" disabled={busy || edits === 0} onClick={() => void preview()} data-testid="symbols-preview">
              Preview
            </button>
            <button type="button" disabled={busy || edits === 0} onClick={() => void save()} data-testid="symbols-save">
              Save
            </button>
            <button
              type="button"
              disabled={busy || edits === 0}
              onClick={() => {
                setWeights({});
                setAnswer(undefined);
                actions.reload();
              }}
            >
              Discard
            </button>
          </div>
          {problem && (
            <p class="error" role="alert" data-testid="symbols-error">
              {problem}
            </p>
          )}
          {saved && (
            <p class="ok" role="status">
              {saved}
            </p>
          )}
        </div>
      )}
      {answer && <WhatifResult answer={answer} />}
    </section>
  );
}
