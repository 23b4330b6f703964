// Selectors and neural: try a selector on a pasted message (/plugins/selectors/check_selector
// as it is typed, /plugins/selectors/check_message to run it; both privileged, as in Rspamd),
// and the state of each neural rule (/plugins/neural/status, a mailsift addition).

import { useEffect, useState } from 'preact/hooks';
import { ApiError, type SelectorCheck, type SelectorData } from '../api';
import { Problem } from '../components/problem';
import { useAsync } from '../components/use-async';
import { fmtInt } from '../format';
import type { PageProps } from '../session';

/** Wait after the last keystroke before asking the server whether the selector parses. */
const CHECK_DELAY_MS = 300;

const EXAMPLE = 'From: Sender <sender@example.org>\r\nTo: user@example.net\r\nSubject: Selector test\r\nMessage-ID: <selector@example.org>\r\n\r\nVisit https://www.example.com/offer now.\r\n';

function SelectorTester({ api }: { api: PageProps['api'] }) {
  const [selector, setSelector] = useState('header(Subject).lower');
  const [message, setMessage] = useState(EXAMPLE);
  const [check, setCheck] = useState<SelectorCheck | undefined>();
  const [result, setResult] = useState<SelectorData | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const [missing, setMissing] = useState<ApiError | undefined>();

  useEffect(() => {
    if (!selector.trim()) return setCheck(undefined);
    let live = true;
    const t = setTimeout(() => {
      api.checkSelector(selector.trim()).then(
        (c) => live && setCheck(c),
        (err: unknown) => live && err instanceof ApiError && setMissing(err),
      );
    }, CHECK_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [api, selector]);

  const run = async () => {
    setProblem(undefined);
    setResult(undefined);
    try {
      setResult(await api.checkMessage(selector.trim(), message.replace(/\r?\n/g, '\r\n')));
    } catch (err) {
      if (err instanceof ApiError && (err.missing || err.unauthorized)) setMissing(err);
      else setProblem(err instanceof ApiError ? `${err.message} (HTTP ${err.status})` : String(err));
    }
  };

  if (missing) return <Problem error={missing} what="the selector tester" />;
  return (
    <form
      class="panel"
      aria-labelledby="selector-h"
      onSubmit={(e) => {
        e.preventDefault();
        void run();
      }}
    >
      <h2 id="selector-h">Selector tester</h2>
      <label>
        Selector
        <input type="text" class="code" value={selector} spellcheck={false} aria-describedby="selector-state" onInput={(e) => setSelector(e.currentTarget.value)} data-testid="selector-input" />
      </label>
      <p id="selector-state" aria-live="polite" data-testid="selector-state" class={check ? (check.success ? 'ok' : 'error') : 'muted'}>
        {!selector.trim() ? 'Type a selector, for example from:domain or header(Subject).lower.' : !check ? 'Checking…' : check.success ? 'The selector is valid.' : `Invalid: ${check.error ?? 'the server did not say why'}`}
      </p>
      <label>
        Message
        <textarea class="code" rows={8} spellcheck={false} value={message} onInput={(e) => setMessage(e.currentTarget.value)} data-testid="selector-message" />
      </label>
      <div class="actions-row">
        <button type="submit" class="primary" disabled={!selector.trim() || !message.trim()} data-testid="selector-run">
          Run on the message
        </button>
      </div>
      {problem && (
        <p class="error" role="alert" data-testid="selector-error">
          {problem}
        </p>
      )}
      {result && (
        <div aria-live="polite">
          <h3>Result</h3>
          {result.data === undefined ? <p class="muted">The selector gave no value for this message.</p> : <pre class="code" data-testid="selector-result">{JSON.stringify(result.data, null, 2)}</pre>}
        </div>
      )}
    </form>
  );
}

function NeuralStatusPanel({ api }: { api: PageProps['api'] }) {
  const status = useAsync(() => api.neuralStatus(), [api], 30_000);
  return (
    <section class="panel" aria-labelledby="neural-h" data-testid="neural-status">
      <h2 id="neural-h">Neural networks</h2>
      {status.error ? (
        <Problem error={status.error} what="the neural status" />
      ) : !status.data ? (
        <p class="muted">Loading…</p>
      ) : !status.data.enabled ? (
        <p class="notice">The neural module is off: no rule is configured (local.d/neural.yaml), or it has no key-value store.</p>
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Symbols</th>
                <th scope="col" class="num">Network in use</th>
                <th scope="col" class="num">Newest stored</th>
                <th scope="col" class="num">Spam vectors</th>
                <th scope="col" class="num">Ham vectors</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {status.data.rules.map((r) => (
                <tr key={r.name}>
                  <th scope="row">{r.name}</th>
                  <td>
                    <code>{r.symbol_spam}</code> / <code>{r.symbol_ham}</code>
                  </td>
                  <td class="num">{r.loaded_version ? `v${r.loaded_version} (${r.inputs} inputs, ${r.hidden} hidden)` : 'none'}</td>
                  <td class="num">{r.store_version ? `v${r.store_version}` : 'none'}</td>
                  <td class="num">{r.vectors ? `${fmtInt(r.vectors.spam)} / ${fmtInt(r.max_trains)}` : '–'}</td>
                  <td class="num">{r.vectors ? `${fmtInt(r.vectors.ham)} / ${fmtInt(r.max_trains)}` : '–'}</td>
                  <td class={r.error ? 'error' : ''}>{r.error ?? (r.training ? 'training' : r.loaded_version ? 'applying' : 'collecting vectors')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function SelectorsPage({ api, session }: PageProps) {
  return (
    <section aria-labelledby="selectors-h">
      <h1 id="selectors-h">Selectors and neural</h1>
      {session.readOnly ? (
        <p class="notice" role="status" data-testid="selector-readonly">
          The selector tester needs the enable password: the server's selector endpoints are privileged, as in Rspamd.
        </p>
      ) : (
        <SelectorTester api={api} />
      )}
      <NeuralStatusPanel api={api} />
    </section>
  );
}
