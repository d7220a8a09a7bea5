// Calls a bridge verb from a component, with the pending flag and the error text the UI shows.
import { useCallback, useEffect, useRef, useState } from 'react';

export interface CallState {
  pending: boolean;
  error: string | null;
}

export function useCall<A extends unknown[], R>(fn: (...args: A) => Promise<R>): [(...args: A) => Promise<R | undefined>, CallState, () => void] {
  const [state, setState] = useState<CallState>({ pending: false, error: null });
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  const run = useCallback(
    async (...args: A) => {
      setState({ pending: true, error: null });
      try {
        const r = await fn(...args);
        if (mounted.current) setState({ pending: false, error: null });
        return r;
      } catch (err) {
        if (mounted.current) setState({ pending: false, error: (err as Error).message });
        return undefined;
      }
    },
    [fn],
  );
  const clear = useCallback(() => setState({ pending: false, error: null }), []);
  return [run, state, clear];
}

/** Fetches on mount and whenever `deps` change; `reload` fetches again. */
export function useFetch<R>(fn: () => Promise<R>, deps: unknown[]): { data: R | undefined; error: string | null; loading: boolean; reload: () => void } {
  const [data, setData] = useState<R | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    fn().then(
      (r) => {
        if (!live) return;
        setData(r);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (!live) return;
        setError((err as Error).message);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { data, error, loading, reload: () => setTick((t) => t + 1) };
}
