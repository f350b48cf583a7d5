import { useEffect, useRef } from 'react';

/**
 * Calls `tick` every `intervalMs` while `enabled` and the tab is visible; the next call is
 * scheduled when the previous one has settled, so slow answers never pile up. Coming back to the
 * tab polls at once rather than showing stale data for a whole interval.
 */
export function usePolling(tick: () => Promise<void>, intervalMs: number, enabled: boolean): void {
  const latest = useRef(tick);
  latest.current = tick;

  useEffect(() => {
    if (!enabled) return;
    let timer: number | undefined;
    let running = false;
    let stopped = false;

    const schedule = () => {
      window.clearTimeout(timer);
      if (!stopped && document.visibilityState === 'visible') timer = window.setTimeout(run, intervalMs);
    };
    const run = async () => {
      if (running || stopped) return;
      running = true;
      try {
        await latest.current();
      } finally {
        running = false;
        schedule();
      }
    };
    const onVisibility = () => {
      if (document.visibilityState === 'visible') void run();
      else window.clearTimeout(timer);
    };

    schedule();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      stopped = true;
      window.clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [enabled, intervalMs]);
}
