// Loading state of one API call, reloadable, with the error kept as an ApiError.

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api';

export interface AsyncState<T> {
  data?: T;
  error?: ApiError;
  loading: boolean;
  reload(): void;
}

/** Runs `load` now, whenever `deps` change, and every `refreshMs` (when given). */
export function useAsync<T>(load: () => Promise<T>, deps: readonly unknown[], refreshMs?: number): AsyncState<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const latest = useRef(0);
  const run = useCallback(() => {
    const n = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => n === latest.current && setState({ data, loading: false }),
      (err: unknown) => n === latest.current && setState((s) => ({ ...s, error: err instanceof ApiError ? err : new ApiError(0, String(err), ''), loading: false })),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps -- deps are the caller's
  }, deps);
  useEffect(() => {
    run();
    if (!refreshMs) return undefined;
    const t = setInterval(run, refreshMs);
    return () => clearInterval(t);
  }, [run, refreshMs]);
  return { ...state, reload: run };
}
