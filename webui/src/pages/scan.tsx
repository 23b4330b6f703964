// Scan and learn: paste a message or upload several, scan them on the controller (POST
// /checkexplain: the scan is counted and kept in the history like any other) and read each
// verdict in the History page's explanation view. An admin can then learn them as spam or ham
// (/learnspam, /learnham) and add them to or remove them from fuzzy storage (/fuzzyadd,
// /fuzzydel); a refusal shows the server's reason (learn refusals arrive as 204 or 208 with the
// reason in the status line).

import { useMemo, useState } from 'preact/hooks';
import { ApiError, type FuzzyStorage, type HistoryRow, type MessageBody, type Outcome, type ScanEnvelope } from '../api';
import { Problem } from '../components/problem';
import { useAsync } from '../components/use-async';
import { Verdict } from '../components/verdict';
import { actionClass, fmtScore } from '../format';
import type { PageProps } from '../session';

/** Files taken from one upload: each is a request, sent one after another. */
const MAX_FILES = 500;

interface Input {
  name: string;
  body: MessageBody;
}

/** What happened to one message: its scan row, or the error that stopped it. */
interface Result {
  name: string;
  row?: HistoryRow;
  error?: string;
}

interface ActionLog {
  what: string;
  name: string;
  outcome?: Outcome;
  error?: string;
}

const ENVELOPE_FIELDS: Array<[keyof ScanEnvelope, string, string]> = [
  ['ip', 'Client IP', '192.0.2.10'],
  ['from', 'Envelope sender', 'sender@example.org'],
  ['rcpt', 'Envelope recipient', 'user@example.net'],
  ['helo', 'HELO', 'mail.example.org'],
  ['hostname', 'Client hostname', 'mail.example.org'],
  ['user', 'Authenticated user', ''],
];

const describeError = (err: unknown): string => (err instanceof ApiError ? `${err.message} (HTTP ${err.status})` : String(err));

export function ScanPage({ api, session }: PageProps) {
  const actions = useAsync(() => api.actions(), [api]);
  const storages = useAsync(() => (session.readOnly ? Promise.resolve<Record<string, FuzzyStorage>>({}) : api.fuzzyStorages()), [api, session.readOnly]);
  const [pasted, setPasted] = useState('');
  const [files, setFiles] = useState<Input[]>([]);
  const [envelope, setEnvelope] = useState<ScanEnvelope>({});
  const [progress, setProgress] = useState<{ done: number; total: number; what: string } | undefined>();
  const [results, setResults] = useState<Result[]>([]);
  const [open, setOpen] = useState(0);
  const [log, setLog] = useState<ActionLog[]>([]);
  const [missing, setMissing] = useState<ApiError | undefined>();
  const [flag, setFlag] = useState('');
  const [weight, setWeight] = useState('1');

  const current: Record<string, number> = {};
  for (const a of actions.data ?? []) if (a.value !== null) current[a.action] = a.value;
  const flags = useMemo(() => {
    const out = new Map<string, number>();
    for (const st of Object.values(storages.data ?? {})) for (const [sym, f] of Object.entries(st.flags)) if (!st.read_only) out.set(sym, f);
    return [...out].sort((a, b) => a[1] - b[1]);
  }, [storages.data]);
  const inputs: Input[] = files.length ? files : pasted.trim() ? [{ name: 'pasted message', body: pasted.replace(/\r?\n/g, '\r\n') }] : [];
  const busy = progress !== undefined;

  /** Runs `step` over every input in turn, with the progress bar; a missing endpoint stops the run. */
  const each = async (what: string, step: (input: Input) => Promise<void>) => {
    setMissing(undefined);
    const list = inputs;
    for (let i = 0; i < list.length; i++) {
      setProgress({ done: i, total: list.length, what });
      try {
        await step(list[i]!);
      } catch (err) {
        if (err instanceof ApiError && (err.missing || err.unauthorized)) {
          setMissing(err);
          break;
        }
        throw err;
      }
    }
    setProgress(undefined);
  };

  const scan = () =>
    void (async () => {
      const out: Result[] = [];
      setResults(out);
      setOpen(0);
      await each('Scanning', async (input) => {
        try {
          out.push({ name: input.name, row: await api.scan(input.body, envelope) });
        } catch (err) {
          if (err instanceof ApiError && (err.missing || err.unauthorized)) throw err;
          out.push({ name: input.name, error: describeError(err) });
        }
        setResults([...out]);
      });
    })();

  const act = (what: string, call: (body: MessageBody) => Promise<Outcome>) =>
    void (async () => {
      const out: ActionLog[] = [];
      setLog(out);
      await each(what, async (input) => {
        try {
          out.unshift({ what, name: input.name, outcome: await call(input.body) });
        } catch (err) {
          if (err instanceof ApiError && (err.missing || err.unauthorized)) throw err;
          out.unshift({ what, name: input.name, error: describeError(err) });
        }
        setLog([...out]);
      });
    })();

  const pickFiles = async (list: FileList | null) => {
    const chosen = [...(list ?? [])].slice(0, MAX_FILES);
    setFiles(await Promise.all(chosen.map(async (f) => ({ name: f.name, body: await f.arrayBuffer() }))));
  };
  const flagNumber = Number(flag || (flags[0]?.[1] ?? NaN));
  const selected = results[open];

  return (
    <section aria-labelledby="scan-h">
      <h1 id="scan-h">Scan and learn</h1>
      <form
        class="panel"
        onSubmit={(e) => {
          e.preventDefault();
          scan();
        }}
      >
        <label>
          Message (headers, a blank line, then the body)
          <textarea class="code" rows={10} spellcheck={false} value={pasted} disabled={files.length > 0} onInput={(e) => setPasted(e.currentTarget.value)} data-testid="scan-message" />
        </label>
        <div class="fields">
          <label>
            Or upload messages (.eml, one message a file)
            <input type="file" multiple accept=".eml,.msg,.txt,message/rfc822,text/plain" onChange={(e) => void pickFiles(e.currentTarget.files)} data-testid="scan-files" />
          </label>
          {files.length > 0 && (
            <button type="button" onClick={() => setFiles([])}>
              Clear {files.length} file{files.length === 1 ? '' : 's'}
            </button>
          )}
        </div>
        <details>
          <summary>Envelope (optional: what the MTA would send)</summary>
          <div class="fields">
            {ENVELOPE_FIELDS.map(([key, label, placeholder]) => (
              <label key={key}>
                {label}
                <input type="text" name={`env-${key}`} value={envelope[key] ?? ''} placeholder={placeholder} onInput={(e) => setEnvelope({ ...envelope, [key]: e.currentTarget.value })} />
              </label>
            ))}
          </div>
        </details>
        <div class="actions-row">
          <button type="submit" class="primary" disabled={busy || inputs.length === 0} data-testid="scan-submit">
            Scan {inputs.length > 1 ? `${inputs.length} messages` : ''}
          </button>
        </div>
        {progress && (
          <label class="progress">
            {progress.what}: {progress.done} of {progress.total}
            <progress max={progress.total} value={progress.done} />
          </label>
        )}
        {missing && <Problem error={missing} what="this action" />}
      </form>

      {results.length > 1 && (
        <div class="scroll">
          <table data-testid="scan-results">
            <thead>
              <tr>
                <th scope="col">Message</th>
                <th scope="col">Action</th>
                <th scope="col" class="num">Score</th>
              </tr>
            </thead>
            <tbody>
              {results.map((r, i) => (
                <tr key={i} class={i === open ? 'selected' : ''}>
                  <td class="wrap">
                    <button type="button" class="link" aria-expanded={i === open} onClick={() => setOpen(i)}>
                      {r.row?.subject && r.row.subject !== 'unknown' ? r.row.subject : r.name}
                    </button>
                  </td>
                  <td>{r.row ? <span class={actionClass(r.row.action)}>{r.row.action}</span> : <span class="error">{r.error}</span>}</td>
                  <td class="num">{r.row ? fmtScore(r.row.score) : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {selected?.error && (
        <p class="error" role="alert" data-testid="scan-error">
          {selected.name}: {selected.error}
        </p>
      )}
      {selected?.row && (
        <div class="panel">
          <Verdict row={selected.row} currentThresholds={current} />
        </div>
      )}

      {!session.readOnly && (
        <section class="panel" aria-labelledby="learn-h">
          <h2 id="learn-h">Learn and fuzzy storage</h2>
          <p class="muted">Applies to {inputs.length === 0 ? 'the message above (none yet)' : inputs.length === 1 ? 'the message above' : `all ${inputs.length} messages`}.</p>
          <div class="actions-row wrap-row">
            <button type="button" disabled={busy || inputs.length === 0} onClick={() => act('Learn spam', (b) => api.learn('spam', b))} data-testid="learn-spam">
              Learn spam
            </button>
            <button type="button" disabled={busy || inputs.length === 0} onClick={() => act('Learn ham', (b) => api.learn('ham', b))} data-testid="learn-ham">
              Learn ham
            </button>
          </div>
          <div class="fields">
            {flags.length > 0 ? (
              <label>
                Fuzzy list
                <select value={flag || String(flags[0]![1])} onChange={(e) => setFlag(e.currentTarget.value)}>
                  {flags.map(([sym, f]) => (
                    <option key={f} value={String(f)}>
                      {sym} (flag {f})
                    </option>
                  ))}
                </select>
              </label>
            ) : (
              <label>
                Fuzzy flag
                <input type="number" min="0" step="1" value={flag} onInput={(e) => setFlag(e.currentTarget.value)} />
              </label>
            )}
            <label>
              Weight
              <input type="number" step="1" value={weight} onInput={(e) => setWeight(e.currentTarget.value)} />
            </label>
            <button type="button" disabled={busy || inputs.length === 0 || !Number.isInteger(flagNumber)} onClick={() => act('Fuzzy add', (b) => api.fuzzy('add', b, flagNumber, weight === '' ? undefined : Number(weight)))} data-testid="fuzzy-add">
              Add to fuzzy
            </button>
            <button type="button" disabled={busy || inputs.length === 0 || !Number.isInteger(flagNumber)} onClick={() => act('Fuzzy delete', (b) => api.fuzzy('del', b, flagNumber))} data-testid="fuzzy-del">
              Remove from fuzzy
            </button>
          </div>
          {flags.length === 0 && !storages.loading && <p class="muted">No writable fuzzy storage is configured: fuzzy requests will be refused with the server's reason.</p>}
          {log.length > 0 && (
            <ul class="outcomes" aria-live="polite" data-testid="learn-log">
              {log.map((l, i) => (
                <li key={i} class={l.outcome?.done ? 'ok' : 'error'}>
                  {l.what} · {l.name}:{' '}
                  {l.error ? l.error : l.outcome!.done ? `done${l.outcome!.hashes ? ` (${l.outcome!.hashes.length} hashes)` : ''}` : `refused: ${l.outcome!.reason} (HTTP ${l.outcome!.status})`}
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </section>
  );
}
