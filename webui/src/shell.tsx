// The frame around every page: login, header (version, session level, theme), navigation built
// from the page registry, and hash routing (#/<page id>), which needs no server-side rewrite and
// so works on any sub-path behind a proxy.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, createApi } from './api';
import { DEFAULT_PAGE, PAGES, type PageDef } from './pages/index';
import { Login } from './login';
import { storedPassword, storePassword, type Session } from './session';
import { Theme } from './theme';

const pageFromHash = (): string => location.hash.replace(/^#\/?/, '') || DEFAULT_PAGE;

export function Shell() {
  const [password, setPassword] = useState<string | undefined>(storedPassword());
  const api = useMemo(() => createApi(() => password), [password]);
  const [session, setSession] = useState<Session | undefined>();
  const [needLogin, setNeedLogin] = useState<string | undefined>();
  const [pageId, setPageId] = useState(pageFromHash());

  useEffect(() => {
    const on = () => setPageId(pageFromHash());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);

  // Asks /auth with whatever we have: a trusted address or open controller needs nothing.
  useEffect(() => {
    let live = true;
    api.auth().then(
      (a) => {
        if (!live) return;
        setSession({ readOnly: a.read_only, passwordless: password === undefined, version: a.version, ...(a.warning ? { warning: a.warning } : {}) });
        setNeedLogin(undefined);
      },
      (err: unknown) => {
        if (!live) return;
        setSession(undefined);
        if (password !== undefined) storePassword(undefined);
        const e = err instanceof ApiError ? err : undefined;
        setNeedLogin(password === undefined ? '' : e?.status === 429 ? 'Too many wrong passwords from this address; wait a minute.' : e?.unauthorized ? 'Wrong password.' : (e?.message ?? String(err)));
        if (password !== undefined) setPassword(undefined);
      },
    );
    return () => {
      live = false;
    };
  }, [api]);

  if (!session) {
    if (needLogin === undefined) return <p class="loading">Connecting…</p>;
    return (
      <Login
        message={needLogin}
        onSubmit={(p) => {
          storePassword(p);
          setPassword(p);
        }}
      />
    );
  }

  const visible = PAGES.filter((p) => !(p.editOnly && session.readOnly));
  const page: PageDef = visible.find((p) => p.id === pageId) ?? visible[0]!;
  const Page = page.component;
  return (
    <div class="app">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">mailsift</span>
        <nav aria-label="Pages">
          <ul>
            {visible.map((p) => (
              <li key={p.id}>
                <a href={`#/${p.id}`} aria-current={p.id === page.id ? 'page' : undefined} data-testid={`nav-${p.id}`} class={p.component ? '' : 'planned'}>
                  {p.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class={`badge ${session.readOnly ? '' : 'ok'}`} data-testid="session-level">
            {session.readOnly ? 'read-only' : 'admin'}
            {session.passwordless ? ' (no password)' : ''}
          </span>
          <Theme />
          {!session.passwordless && (
            <button
              type="button"
              onClick={() => {
                storePassword(undefined);
                setPassword(undefined);
              }}
            >
              Log out
            </button>
          )}
        </div>
      </header>
      {session.warning && (
        <p class="warning" role="status">
          {session.warning}
        </p>
      )}
      <main id="main" tabIndex={-1}>
        {Page ? (
          <Page api={api} session={session} />
        ) : (
          <section aria-labelledby="planned-h">
            <h1 id="planned-h">{page.title}</h1>
            <p class="notice">This page is not built yet. {page.planned}</p>
          </section>
        )}
      </main>
      <footer class="muted">mailsift {session.version}</footer>
    </div>
  );
}
