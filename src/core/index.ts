export { parseRetryAfter } from './retry-after.js';
export type { Usage } from './usage.js';
export { DURATION_PATTERN, parseDuration } from './duration.js';
export { maskSecrets } from './mask-secrets.js';
export { SecretBox } from './secret-box.js';
export { nearestValue, plainAddress, TrustedProxies, TrustedProxyEntryError } from './trusted-proxies.js';
export { releaseVersion } from './release.js';
export { closestNames, editDistance } from './closest-names.js';
