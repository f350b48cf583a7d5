/**
 * A stop signal this soon after the first is the same request, not an operator's second one: a
 * Ctrl-C under `npm start` reaches the gateway twice, from the terminal and forwarded by npm.
 */
const SAME_REQUEST_MS = 1_000;

/**
 * Resolves with the first SIGTERM or SIGINT; a later one calls `now` (the operator gave up
 * waiting). The listeners stay for the process's life, so that a signal is never left to Node's
 * default, which would end the process mid-drain.
 */
export function stopSignal(now: () => void): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let firstAt: number | null = null;
    const onSignal = (signal: NodeJS.Signals): void => {
      if (firstAt === null) {
        firstAt = Date.now();
        resolve(signal);
      } else if (Date.now() - firstAt >= SAME_REQUEST_MS) now();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // Under `npm start` the gateway runs below npm, which passes SIGTERM and SIGINT on (the start
    // script execs the gateway) but dies of SIGHUP or SIGKILL; the gateway would be orphaned,
    // still serving with nothing supervising it. Losing that parent means the same as SIGTERM.
    if (process.env['npm_lifecycle_event'] === 'start') onParentExit(() => firstAt === null && onSignal('SIGTERM'));
  });
}

/** Calls `then` once this process's parent has gone (it is re-parented), checking twice a second. */
function onParentExit(then: () => void): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    then();
  }, 500);
  timer.unref();
}
