// The part of package-lock.json a production install needs: what the root's dependencies reach.

/** The location `name` resolves to from the package at `from`, as Node finds it: the nearest node_modules up the tree. */
function resolveLocation(packages, from, name) {
  for (let at = from; ; at = at.includes('/node_modules/') ? at.slice(0, at.lastIndexOf('/node_modules/')) : '') {
    const candidate = `${at === '' ? '' : `${at}/`}node_modules/${name}`;
    if (candidate in packages) return candidate;
    if (at === '') return null;
  }
}

/**
 * Every location reached from the root through dependencies, optional dependencies and required
 * peers. Optional peers are not followed: npm installs one only when something else put it in the
 * tree (TypeScript, an optional peer of node-llama-cpp, is there for the dev dependencies).
 */
function productionLocations(packages) {
  const reached = new Set(['']);
  const queue = [''];
  while (queue.length > 0) {
    const at = queue.pop();
    const entry = packages[at];
    const optionalPeers = Object.entries(entry.peerDependenciesMeta ?? {})
      .filter(([, meta]) => meta.optional)
      .map(([name]) => name);
    const names = [
      ...Object.keys(entry.dependencies ?? {}),
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...Object.keys(entry.peerDependencies ?? {}).filter((name) => !optionalPeers.includes(name)),
    ];
    for (const name of names) {
      const location = resolveLocation(packages, at, name);
      if (location !== null && !reached.has(location)) {
        reached.add(location);
        queue.push(location);
      }
    }
  }
  return reached;
}

/** `lock` for a package without devDependencies: the same versions, nothing the production tree does not reach. */
export function productionLock(lock) {
  const reached = productionLocations(lock.packages);
  const packages = Object.fromEntries(Object.entries(lock.packages).filter(([location]) => reached.has(location)));
  const { devDependencies: _dropped, ...root } = packages[''];
  return { ...lock, packages: { ...packages, '': root } };
}
