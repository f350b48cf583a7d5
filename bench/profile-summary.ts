import { readFileSync } from 'node:fs';

/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): where the self time went, by function and
 * by module (our source files, each package, Node internals, GC). Usage:
 *   node dist-bench/profile-summary.js FILE.cpuprofile [TOP]
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [, , file, topArgument = '25'] = process.argv;
if (file === undefined) throw new Error('usage: profile-summary FILE.cpuprofile [TOP]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfTime = new Map<number, number>();
profile.samples.forEach((id, index) => selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
const total = [...selfTime.values()].reduce((sum, value) => sum + value, 0);

function moduleOf(url: string, name: string): string {
  if (name === '(garbage collector)') return '(gc)';
  if (name === '(idle)' || name === '(program)') return name;
  if (url === '') return '(native)';
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packageMatch !== null) return packageMatch[1] as string;
  const sourceMatch = /\/(dist|src)\/(.+)$/.exec(url);
  if (sourceMatch !== null) return `switchyard:${sourceMatch[2]}`;
  if (url.startsWith('node:')) return url;
  return url;
}

const byFunction = new Map<string, number>();
const byModule = new Map<string, number>();
for (const [id, time] of selfTime) {
  const node = byId.get(id);
  if (node === undefined) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const name = functionName || '(anonymous)';
  const module = moduleOf(url, name);
  const key = `${name} (${module}${url === '' ? '' : `:${lineNumber + 1}`})`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + time);
  byModule.set(module, (byModule.get(module) ?? 0) + time);
}

const busy = total - (byModule.get('(idle)') ?? 0);
const top = Number(topArgument);
const show = (title: string, entries: Map<string, number>) => {
  process.stdout.write(`\n${title} (share of busy time, ${(busy / 1000).toFixed(0)} ms busy)\n`);
  for (const [key, time] of [...entries]
    .filter(([key]) => !key.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)) {
    process.stdout.write(`${((100 * time) / busy).toFixed(1).padStart(5)}%  ${key}\n`);
  }
};
show('by module', byModule);
show('by function (self time)', byFunction);
