// Maps: the file maps the modules declared (/maps), one opened to read (/getmap) or, for an
// admin and an editable map, to edit and save (/savemap; the server's refusal is shown beside the
// button). A value can be looked up in every map at once (/plugins/maps/query).

import { useEffect, useState } from 'preact/hooks';
import { ApiError, type MapInfo, type MapQueryAnswer } from '../api';
import { Problem } from '../components/problem';
import { useAsync } from '../components/use-async';
import type { PageProps } from '../session';

function MapEditor({ api, map, readOnly, onClose }: { api: PageProps['api']; map: MapInfo; readOnly: boolean; onClose(): void }) {
  const content = useAsync(() => api.getMap(map.map), [api, map.map]);
  const [text, setText] = useState<string | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => setText(content.data), [content.data]);
  const editable = !readOnly && map.editable;
  const save = async () => {
    setBusy(true);
    setProblem(undefined);
    setSaved(false);
    try {
      await api.saveMap(map.map, text ?? '');
      setSaved(true);
      content.reload();
    } catch (err) {
      setProblem(err instanceof ApiError ? `${err.message} (HTTP ${err.status})` : String(err));
    } finally {
      setBusy(false);
    }
  };
  const lines = (text ?? '').split('\n').filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#')).length;
  return (
    <section class="panel" aria-labelledby="map-h" data-testid="map-editor">
      <button type="button" class="close" onClick={onClose} aria-label="Close the map">
        ×
      </button>
      <h2 id="map-h">{map.description || map.uri}</h2>
      <p class="muted">
        <code>{map.uri}</code> · id {map.map} · {editable ? 'editable' : map.editable ? 'read-only session' : 'not writable by the server'} · {lines} entries
      </p>
      {content.error ? (
        <Problem error={content.error} what="this map" />
      ) : text === undefined ? (
        <p class="muted">Loading…</p>
      ) : (
        <>
          <label>
            Content {editable ? '(one entry a line, # starts a comment)' : ''}
            <textarea class="code" rows={Math.min(24, Math.max(6, text.split('\n').length + 1))} value={text} readOnly={!editable} spellcheck={false} onInput={(e) => setText(e.currentTarget.value)} data-testid="map-text" />
          </label>
          {editable && (
            <div class="actions-row">
              <button type="button" class="primary" disabled={busy || text === content.data} onClick={() => void save()} data-testid="map-save">
                Save
              </button>
              <button type="button" disabled={busy || text === content.data} onClick={() => setText(content.data)}>
                Discard
              </button>
            </div>
          )}
          {problem && (
            <p class="error" role="alert" data-testid="map-error">
              {problem}
            </p>
          )}
          {saved && (
            <p class="ok" role="status">
              Saved. The next scan on this controller uses it; workers reload it within a second.
            </p>
          )}
        </>
      )}
    </section>
  );
}

function MapQuery({ api }: { api: PageProps['api'] }) {
  const [value, setValue] = useState('');
  const [answer, setAnswer] = useState<MapQueryAnswer | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const run = async () => {
    setError(undefined);
    try {
      setAnswer(await api.queryMaps(value.trim()));
    } catch (err) {
      setAnswer(undefined);
      setError(err instanceof ApiError ? err : new ApiError(0, String(err), ''));
    }
  };
  const hits = answer?.results.filter((r) => r.hit) ?? [];
  const misses = answer ? answer.results.length - hits.length : 0;
  return (
    <section class="panel" aria-labelledby="query-h">
      <h2 id="query-h">Test a value against all maps</h2>
      <form
        class="fields"
        onSubmit={(e) => {
          e.preventDefault();
          if (value.trim()) void run();
        }}
      >
        <label>
          Value (address, domain, IP, …)
          <input type="text" value={value} onInput={(e) => setValue(e.currentTarget.value)} data-testid="map-query-value" />
        </label>
        <button type="submit" class="primary" disabled={!value.trim()}>
          Look up
        </button>
      </form>
      {error && <Problem error={error} what="the map lookup" />}
      {answer && (
        <div aria-live="polite" data-testid="map-query-result">
          {hits.length === 0 ? (
            <p>No map holds this value{misses ? ` (${misses} maps looked in)` : ''}.</p>
          ) : (
            <div class="scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Map</th>
                    <th scope="col">Key</th>
                    <th scope="col">Value</th>
                  </tr>
                </thead>
                <tbody>
                  {hits.map((r) => (
                    <tr key={`${r.map} ${r.key}`}>
                      <td class="wrap">
                        <code>{r.map}</code>
                      </td>
                      <td>{r.key}</td>
                      <td class="wrap">{r.value}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <p class="muted">Not found in the other {misses} maps.</p>
            </div>
          )}
        </div>
      )}
    </section>
  );
}

export function MapsPage({ api, session }: PageProps) {
  const maps = useAsync(() => api.maps(), [api]);
  const [open, setOpen] = useState<MapInfo | undefined>();
  return (
    <section aria-labelledby="maps-h">
      <div class="page-head">
        <h1 id="maps-h">Maps</h1>
        <button type="button" onClick={maps.reload}>
          Reload
        </button>
      </div>
      {maps.error ? (
        <Problem error={maps.error} what="the maps" />
      ) : (
        <div class="scroll">
          <table data-testid="maps-table">
            <thead>
              <tr>
                <th scope="col">Map</th>
                <th scope="col">Description</th>
                <th scope="col" class="hide-phone">Editable</th>
              </tr>
            </thead>
            <tbody>
              {(maps.data ?? []).map((m) => (
                <tr key={m.map} class={open?.map === m.map ? 'selected' : ''}>
                  <td class="wrap">
                    <button type="button" class="link" title={m.uri} aria-expanded={open?.map === m.map} onClick={() => setOpen(open?.map === m.map ? undefined : m)}>
                      {m.uri.split('/').pop() || m.uri}
                    </button>
                  </td>
                  <td class="wrap">{m.description}</td>
                  <td class="hide-phone">{m.editable ? 'yes' : 'no'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {maps.data?.length === 0 && <p class="muted">No file maps are declared by the modules.</p>}
        </div>
      )}
      {open && <MapEditor key={open.map} api={api} map={open} readOnly={session.readOnly} onClose={() => setOpen(undefined)} />}
      <MapQuery api={api} />
    </section>
  );
}
