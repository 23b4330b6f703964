// History: the stored scans, filtered in the page (action, score range, symbol, sender,
// recipient, IP, time, free text); a row opens its verdict explanation.

import { useMemo, useState } from 'preact/hooks';
import { ACTIONS, type HistoryRow } from '../api';
import { Problem } from '../components/problem';
import { useAsync } from '../components/use-async';
import { Verdict } from '../components/verdict';
import { actionClass, fmtScore, fmtTime } from '../format';
import type { PageProps } from '../session';

interface Filters {
  action: string;
  min: string;
  max: string;
  symbol: string;
  sender: string;
  rcpt: string;
  ip: string;
  since: string;
  until: string;
  text: string;
}

const EMPTY: Filters = { action: '', min: '', max: '', symbol: '', sender: '', rcpt: '', ip: '', since: '', until: '', text: '' };
const has = (hay: string, needle: string) => hay.toLowerCase().includes(needle.trim().toLowerCase());

export function matches(row: HistoryRow, f: Filters): boolean {
  if (f.action && row.action !== f.action) return false;
  if (f.min !== '' && !(row.score >= Number(f.min))) return false;
  if (f.max !== '' && !(row.score <= Number(f.max))) return false;
  if (f.symbol && !Object.keys(row.symbols).some((s) => has(s, f.symbol))) return false;
  if (f.sender && !has(`${row.sender_smtp} ${row.sender_mime}`, f.sender)) return false;
  if (f.rcpt && !has([...row.rcpt_smtp, ...row.rcpt_mime].join(' '), f.rcpt)) return false;
  if (f.ip && !has(row.ip, f.ip)) return false;
  if (f.since && row.unix_time * 1000 < Date.parse(f.since)) return false;
  if (f.until && row.unix_time * 1000 > Date.parse(f.until)) return false;
  if (f.text && !has(`${row.subject} ${row['message-id'] ?? ''}`, f.text)) return false;
  return true;
}

export function HistoryPage({ api }: PageProps) {
  const history = useAsync(() => api.history(), [api]);
  const actions = useAsync(() => api.actions(), [api]);
  const [f, setF] = useState<Filters>(EMPTY);
  const [open, setOpen] = useState<number | undefined>(undefined);
  const rows = history.data ?? [];
  const shown = useMemo(() => rows.map((row, i) => ({ row, i })).filter(({ row }) => matches(row, f)), [rows, f]);
  const current: Record<string, number> = {};
  for (const a of actions.data ?? []) if (a.value !== null) current[a.action] = a.value;
  const field = (key: keyof Filters, label: string, type: 'text' | 'number' | 'datetime-local' = 'text') => {
    const on = (e: { currentTarget: HTMLInputElement }) => setF({ ...f, [key]: e.currentTarget.value });
    return (
      <label>
        {label}
        {type === 'number' ? (
          <input type="number" step="any" value={f[key]} onInput={on} />
        ) : type === 'datetime-local' ? (
          <input type="datetime-local" value={f[key]} onInput={on} />
        ) : (
          <input type="text" value={f[key]} onInput={on} />
        )}
      </label>
    );
  };
  const selected = open !== undefined ? rows[open] : undefined;
  /** Filters start folded on a phone: the table is what one came for. */
  const wide = matchMedia('(min-width: 760px)').matches;

  return (
    <section aria-labelledby="history-h">
      <div class="page-head">
        <h1 id="history-h">History</h1>
        <button type="button" onClick={history.reload}>
          Reload
        </button>
      </div>
      {history.error && <Problem error={history.error} what="the history" />}
      <details class="filters-box" open={wide}>
        <summary>Filters</summary>
      <form class="filters" role="search" aria-label="Filter the history" onSubmit={(e) => e.preventDefault()}>
        <label>
          Action
          <select value={f.action} onChange={(e) => setF({ ...f, action: e.currentTarget.value })}>
            <option value="">any</option>
            {ACTIONS.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        {field('min', 'Score from', 'number')}
        {field('max', 'Score to', 'number')}
        {field('symbol', 'Symbol')}
        {field('sender', 'Sender')}
        {field('rcpt', 'Recipient')}
        {field('ip', 'IP')}
        {field('since', 'Since', 'datetime-local')}
        {field('until', 'Until', 'datetime-local')}
        {field('text', 'Subject or Message-ID')}
        <button type="button" onClick={() => setF(EMPTY)}>
          Clear
        </button>
      </form>
      </details>
      <p class="muted" aria-live="polite">
        {history.loading && !history.data ? 'Loading…' : `${shown.length} of ${rows.length} scans`}
      </p>
      <div class="scroll">
        <table class="history" data-testid="history-table">
          <thead>
            <tr>
              <th scope="col">Subject</th>
              <th scope="col">Action</th>
              <th scope="col" class="num">Score</th>
              <th scope="col">Time</th>
              <th scope="col">Sender</th>
              <th scope="col" class="wide-only">IP</th>
              <th scope="col" class="wide-only">Symbols</th>
            </tr>
          </thead>
          <tbody>
            {shown.map(({ row, i }) => (
              <tr key={i} class={open === i ? 'selected' : ''}>
                <td class="wrap">
                  <button type="button" class="link" aria-expanded={open === i} onClick={() => setOpen(open === i ? undefined : i)}>
                    {row.subject || '(no subject)'}
                  </button>
                </td>
                <td>
                  <span class={actionClass(row.action)}>{row.action}</span>
                </td>
                <td class="num">{fmtScore(row.score)}</td>
                <td class="nowrap">{fmtTime(row.unix_time)}</td>
                <td>{row.sender_smtp}</td>
                <td class="wide-only">{row.ip}</td>
                <td class="muted wide-only">{Object.keys(row.symbols).length}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {selected && (
        <div class="panel">
          <button type="button" class="close" onClick={() => setOpen(undefined)} aria-label="Close the explanation">
            ×
          </button>
          <Verdict row={selected} currentThresholds={current} />
        </div>
      )}
    </section>
  );
}
