import v8 from 'node:v8';
import vm from 'node:vm';

// `--expose-gc` set at run time makes `gc` exist in contexts created after it; the test workers are
// started without the flag, and this keeps it out of the suite's command line.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/**
 * A full garbage collection, so that a memory reading counts what is held, not what is garbage
 * still waiting for a collection (how long it waits differs between Node versions).
 */
export function collectGarbage(): void {
  gc();
}
