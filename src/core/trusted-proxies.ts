import { BlockList, isIP } from 'node:net';

/** Names that stand for address ranges in `server.trusted_proxies`. */
const SHORTCUTS: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/**
 * Answers remembered, per address as written: a range lookup costs ~300 ns, a remembered answer a
 * map read, and the same few addresses (the proxy's, a kept-alive client's) ask again and again.
 * Past this many the memory starts over, so a flood of addresses cannot grow it.
 */
const REMEMBERED_ADDRESSES = 1_024;

/** An entry of `server.trusted_proxies` that is neither an address, a CIDR range nor a shortcut. */
export class TrustedProxyEntryError extends Error {
  constructor(
    readonly index: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The reverse proxies whose `X-Forwarded-*` headers the gateway believes (docs/reverse-proxy.md).
 * Parsed once at start; asking about an address is one range lookup, and nothing at all when the
 * list is empty (the default: no forwarded header is trusted).
 */
export class TrustedProxies {
  static readonly none = new TrustedProxies(null);

  private readonly remembered = new Map<string, boolean>();

  private constructor(private readonly ranges: BlockList | null) {}

  /** Addresses (`10.0.0.5`, `::1`), CIDR ranges (`10.0.0.0/8`, `fd00::/8`) and the shortcuts `loopback` and `private`. */
  static parse(entries: readonly string[]): TrustedProxies {
    if (entries.length === 0) return TrustedProxies.none;
    const ranges = new BlockList();
    entries.forEach((entry, index) => {
      const shortcut = SHORTCUTS[entry.trim().toLowerCase()];
      for (const range of shortcut ?? [entry]) addRange(ranges, range, index);
    });
    return new TrustedProxies(ranges);
  }

  get empty(): boolean {
    return this.ranges === null;
  }

  /** Whether a connection from this address is a trusted proxy's. */
  trusts(address: string | undefined): boolean {
    if (this.ranges === null || address === undefined) return false;
    const remembered = this.remembered.get(address);
    if (remembered !== undefined) return remembered;
    const plain = plainAddress(address);
    const family = isIP(plain);
    const trusted = family !== 0 && this.ranges.check(plain, family === 4 ? 'ipv4' : 'ipv6');
    if (this.remembered.size === REMEMBERED_ADDRESSES) this.remembered.clear();
    this.remembered.set(address, trusted);
    return trusted;
  }

  /**
   * The client's address: the connection's own, unless it comes from a trusted proxy; then the
   * right-most `X-Forwarded-For` address that is not a trusted proxy (each proxy appends the
   * address it was reached from, so everything left of the first untrusted one is that client's
   * own word). A hop that is not an address ends the walk at the nearest address before it.
   */
  clientOf(peer: string | undefined, forwardedFor: string | readonly string[] | undefined): string {
    const direct = peer === undefined ? '' : plainAddress(peer);
    if (this.ranges === null || forwardedFor === undefined || !this.trusts(direct)) return direct;
    const hops = (typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(',')).split(',');
    let nearest = direct;
    for (let index = hops.length - 1; index >= 0; index--) {
      const hop = plainAddress(withoutPort((hops[index] ?? '').trim()));
      if (isIP(hop) === 0) return nearest;
      if (!this.trusts(hop)) return hop;
      nearest = hop;
    }
    return nearest;
  }
}

/** The last value of a header a chain of proxies may have appended to: what the nearest one said. */
export function nearestValue(header: string | readonly string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const joined = typeof header === 'string' ? header : header.join(',');
  const value = joined.slice(joined.lastIndexOf(',') + 1).trim();
  return value === '' ? undefined : value;
}

/** An IPv4-mapped IPv6 address (`::ffff:10.1.2.3`, what a dual-stack listener sees) is its IPv4 address. */
export function plainAddress(address: string): string {
  if (address.length > 7 && address.includes('.') && address.slice(0, 7).toLowerCase() === '::ffff:') return address.slice(7);
  return address;
}

/** `1.2.3.4:5678` and `[2001:db8::1]:443`, as some proxies write `X-Forwarded-For`, without the port. */
function withoutPort(hop: string): string {
  if (hop.startsWith('[')) {
    const end = hop.indexOf(']');
    return end === -1 ? hop : hop.slice(1, end);
  }
  const colon = hop.indexOf(':');
  return colon !== -1 && colon === hop.lastIndexOf(':') && hop.includes('.') ? hop.slice(0, colon) : hop;
}

function addRange(ranges: BlockList, entry: string, index: number): void {
  const slash = entry.indexOf('/');
  const address = plainAddress((slash === -1 ? entry : entry.slice(0, slash)).trim());
  const family = isIP(address);
  if (family === 0) {
    throw new TrustedProxyEntryError(
      index,
      `"${entry}" is not an IP address, a CIDR range (10.0.0.0/8, fd00::/8) or one of ${Object.keys(SHORTCUTS).join(', ')}`,
    );
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (slash === -1) {
    ranges.addAddress(address, type);
    return;
  }
  const prefixText = entry.slice(slash + 1).trim();
  const prefix = Number(prefixText);
  const widest = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefixText) || prefix > widest) {
    throw new TrustedProxyEntryError(index, `"${entry}": the prefix length must be 0 to ${widest}`);
  }
  ranges.addSubnet(address, prefix, type);
}
