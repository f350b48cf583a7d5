/**
 * Weighted rendezvous (highest random weight) hashing: every credential gets a score for a key,
 * and the key goes to the highest. Gateway processes that never talked to each other rank a
 * session's credentials alike, a credential that leaves moves only the sessions it had, and a
 * credential of weight 2 wins twice as many keys as one of weight 1 (Schindelhauer and Schomaker's
 * `-weight / ln(u)`).
 */
export function rendezvousScore(keyHash: number, credentialHash: number, weight: number): number {
  const mixed = mix32((keyHash ^ Math.imul(credentialHash, 0x9e3779b1)) >>> 0);
  // In (0, 1), never 0 or 1: ln of either would give an infinite score.
  const unit = (mixed + 1) / 4_294_967_297;
  return -weight / Math.log(unit);
}

/** FNV-1a over the UTF-16 code units, mixed: a stable 32-bit hash, the same in every process. */
export function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return mix32(hash >>> 0);
}

/** MurmurHash3's finaliser: spreads every input bit over the whole word. */
function mix32(value: number): number {
  let hash = value;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
