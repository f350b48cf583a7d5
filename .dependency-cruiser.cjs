/**
 * The import table of docs/architecture.md ("What each folder may import"), checked: every import
 * from one folder of src/ into another must be in the importing folder's row. `values` may be
 * imported in any way; `types` only with `import type` / `export type` (erased from the build, so
 * nothing of the folder loads at run time). With `verbatimModuleSyntax`, `import { type X }` still
 * loads its module, so it counts as a value import. Tests and contract suites are not checked.
 *
 * `npm run lint:architecture` runs it; test/packaging/architecture-rules.test.ts fails on any
 * violation, so `npm test` does too. Change this file and the table together.
 */

/** A folder of src/ (with its trailing slash) or one file, as a path pattern. */
const folder = (name) => `^src/${name}/`;
const file = (name) => `^src/${name.replaceAll('.', '\\.')}$`;

const core = [folder('core'), folder('errors')];

/**
 * Each row: the files it covers (`from`), what they may import as values and as types only, and
 * the recorded exceptions (one file may import one thing the row does not allow, with the reason).
 */
const rows = [
  { name: 'core', from: folder('core'), values: [], types: [] },
  { name: 'errors', from: folder('errors'), values: [], types: [] },
  { name: 'store', from: folder('store'), values: [], types: [] },
  { name: 'runtime', from: folder('runtime'), values: [], types: [] },
  // The request path's waiting operations are kept in core/'s SwapList.
  { name: 'state', from: folder('state'), values: [folder('core')], types: [] },
  { name: 'protocols', from: folder('protocols'), values: [...core], types: [] },
  { name: 'upstream-http', from: folder('upstream-http'), values: [...core], types: [folder('config')] },
  { name: 'config', from: folder('config'), values: [folder('core')], types: [] },
  {
    name: 'api',
    from: folder('api'),
    // The embeddings request counts its input's tokens with the tokenizer (usage/tokenizer.ts).
    values: [...core, folder('usage'), folder('protocols')],
    types: [folder('store')],
  },
  {
    name: 'access',
    from: folder('access'),
    // Input checks use the wire schemas (api/); the caller limits charge the shared state (state/).
    values: [...core, folder('api'), folder('state')],
    types: [folder('store')],
  },
  {
    name: 'http',
    from: folder('http'),
    values: [...core, folder('access'), folder('admin'), folder('api'), folder('services'), folder('usage')],
    types: [folder('routing'), folder('observability'), folder('protocols')],
  },
  {
    name: 'admin',
    from: folder('admin'),
    values: [...core, folder('access'), folder('api'), folder('routing')],
    types: [folder('config'), folder('store'), file('providers/provider-adapter.ts')],
  },
  {
    name: 'services',
    from: folder('services'),
    // canUseModel: the model allow-list, one rule for the services and the edge's /v1/models.
    values: [
      ...core,
      folder('routing'),
      folder('api'),
      folder('usage'),
      folder('protocols'),
      file('providers/provider-adapter.ts'),
      file('access/authorize.ts'),
    ],
    types: [folder('access'), folder('config')],
  },
  {
    name: 'routing',
    from: folder('routing'),
    // ConfigError: the catalog refuses a model's config at start or reload, as config/ does.
    values: [...core, file('providers/provider-adapter.ts'), file('config/config-error.ts')],
    types: [folder('config')],
  },
  {
    name: 'providers/provider-adapter.ts',
    from: file('providers/provider-adapter.ts'),
    values: [...core],
    types: [folder('config'), folder('protocols')],
  },
  {
    name: 'providers/registry.ts',
    from: file('providers/registry.ts'),
    values: [...core, folder('providers'), folder('upstream-http')],
    types: [folder('config')],
  },
  {
    name: 'providers/*/',
    // A provider folder imports its own files, shared/ and the contract, never a sibling provider.
    from: '^src/providers/([^/]+)/',
    sibling: '^src/providers/(?!$1/|shared/)[^/]+/',
    // local/: its engines' worker script is found as the tokenizer's is (runtime/worker-script.ts).
    values: [...core, folder('providers'), folder('protocols'), folder('upstream-http'), file('config/config-error.ts'), folder('runtime')],
    types: [folder('config')],
    exceptions: [
      {
        from: '^src/providers/(azure)/',
        to: folder('providers/openai'),
        reason: 'Azure is configuration of the openai adapter (its endpoints and its auth header), not an adapter of its own',
      },
      {
        from: '^src/providers/(shared)/upstream-keys\\.ts$',
        to: file('config/index.ts'),
        reason: "ConfigError and COMMON_UPSTREAM_KEYS: reading an upstream entry's own keys is a config check at start or reload",
      },
      {
        from: '^src/providers/(codex)/index\\.ts$',
        to: file('config/index.ts'),
        reason: "ConfigError: the factory refuses a codex upstream's keys at start or reload, as config/ does",
      },
    ],
  },
];

const tests = ['\\.test\\.ts$', '-contract\\.ts$'];

/** The row's rules for the files `from` covers; `allowed` adds what their exceptions allow. */
function rules(row, from, allowed = []) {
  const permitted = [...row.values, ...allowed];
  const list = [
    {
      name: `${row.name}: not in its row`,
      comment: `docs/architecture.md: ${row.name} may import ${[...row.values, ...row.types].join(', ') || 'nothing of ours'}`,
      severity: 'error',
      from,
      to: { path: '^src/', pathNot: [row.from, ...permitted, ...row.types] },
    },
  ];
  if (row.types.length > 0) {
    list.push({
      name: `${row.name}: types only`,
      comment: `docs/architecture.md: ${row.name} may import only the types of ${row.types.join(', ')}`,
      severity: 'error',
      from,
      to: { path: row.types, pathNot: [row.from, ...permitted], dependencyTypesNot: ['type-only'] },
    });
  }
  if (row.sibling !== undefined) {
    list.push({
      name: `${row.name}: another provider`,
      comment: 'docs/architecture.md: a provider folder imports shared/ and provider-adapter.ts, never another provider',
      severity: 'error',
      from,
      to: { path: row.sibling, pathNot: allowed },
    });
  }
  return list;
}

/**
 * dependency-cruiser has no "except this pair" on a rule: the row's rules skip the files an
 * exception names, and those files get the row's rules again with the excepted targets allowed.
 */
function rowRules(row) {
  const exceptions = row.exceptions ?? [];
  const excepted = [...new Set(exceptions.map((exception) => exception.from))];
  return [
    ...rules(row, { path: row.from, pathNot: [...tests, ...excepted] }),
    ...excepted.flatMap((path) =>
      rules(
        row,
        { path, pathNot: tests },
        exceptions.filter((exception) => exception.from === path).map((exception) => exception.to),
      ),
    ),
  ];
}

module.exports = {
  forbidden: rows.flatMap(rowRules),
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: tests },
    includeOnly: '^src/',
  },
};
