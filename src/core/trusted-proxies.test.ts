import { describe, expect, it } from 'vitest';
import { nearestValue, TrustedProxies, TrustedProxyEntryError } from './trusted-proxies.js';

describe('TrustedProxies', () => {
  it('trusts nothing when the list is empty', () => {
    const proxies = TrustedProxies.parse([]);
    expect(proxies.empty).toBe(true);
    expect(proxies.trusts('127.0.0.1')).toBe(false);
    expect(proxies.clientOf('127.0.0.1', '203.0.113.7')).toBe('127.0.0.1');
  });

  it('matches single addresses and IPv4 CIDR ranges', () => {
    const proxies = TrustedProxies.parse(['10.0.0.0/8', '192.168.1.5']);
    expect(proxies.trusts('10.200.3.4')).toBe(true);
    expect(proxies.trusts('11.0.0.1')).toBe(false);
    expect(proxies.trusts('192.168.1.5')).toBe(true);
    expect(proxies.trusts('192.168.1.6')).toBe(false);
  });

  it('matches IPv6 addresses and ranges', () => {
    const proxies = TrustedProxies.parse(['fd00::/8', '2001:db8::1']);
    expect(proxies.trusts('fd12:3456::1')).toBe(true);
    expect(proxies.trusts('fe80::1')).toBe(false);
    expect(proxies.trusts('2001:db8::1')).toBe(true);
    expect(proxies.trusts('2001:db8:0:0:0:0:0:1')).toBe(true);
    expect(proxies.trusts('2001:db8::2')).toBe(false);
  });

  it('takes an IPv4-mapped IPv6 address as its IPv4 address, in the list and from the socket', () => {
    const proxies = TrustedProxies.parse(['127.0.0.1', '::ffff:10.0.0.9']);
    expect(proxies.trusts('::ffff:127.0.0.1')).toBe(true);
    expect(proxies.trusts('::FFFF:127.0.0.1')).toBe(true);
    expect(proxies.trusts('10.0.0.9')).toBe(true);
    expect(proxies.trusts('::ffff:127.0.0.2')).toBe(false);
    expect(proxies.clientOf('::ffff:127.0.0.1', '::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('answers the same for an address asked again, also after many others', () => {
    const proxies = TrustedProxies.parse(['10.0.0.0/16']);
    for (let round = 0; round < 2; round++) {
      for (let index = 0; index < 3_000; index++) {
        const address = `10.${index % 2}.${(index >> 8) & 255}.${index & 255}`;
        expect(proxies.trusts(address)).toBe(index % 2 === 0);
      }
    }
  });

  it('knows the shortcuts loopback and private', () => {
    const loopback = TrustedProxies.parse(['loopback']);
    expect(loopback.trusts('127.0.0.1')).toBe(true);
    expect(loopback.trusts('127.9.9.9')).toBe(true);
    expect(loopback.trusts('::1')).toBe(true);
    expect(loopback.trusts('10.0.0.1')).toBe(false);
    const lan = TrustedProxies.parse(['private']);
    for (const address of ['10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.0.1', 'fd00::1']) expect(lan.trusts(address)).toBe(true);
    for (const address of ['172.32.0.1', '8.8.8.8', '::1', '127.0.0.1']) expect(lan.trusts(address)).toBe(false);
  });

  it('refuses what is not an address, a range or a shortcut, naming the entry', () => {
    for (const [entries, index] of [
      [['10.0.0.0/33'], 0],
      [['127.0.0.1', 'nginx'], 1],
      [['fd00::/129'], 0],
      [['10.0.0.0/'], 0],
      [['10.0.0.0/-1'], 0],
      [['300.1.1.1'], 0],
    ] as const) {
      let thrown: unknown;
      try {
        TrustedProxies.parse(entries);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TrustedProxyEntryError);
      expect((thrown as TrustedProxyEntryError).index).toBe(index);
    }
  });

  it('never reads X-Forwarded-For from a peer it does not trust', () => {
    const proxies = TrustedProxies.parse(['10.0.0.1']);
    expect(proxies.clientOf('198.51.100.4', '203.0.113.7')).toBe('198.51.100.4');
  });

  it('takes the right-most X-Forwarded-For address that is not a trusted proxy', () => {
    const proxies = TrustedProxies.parse(['10.0.0.0/8']);
    // The client wrote the first entry itself: everything left of the first untrusted hop is its word.
    expect(proxies.clientOf('10.0.0.1', '1.1.1.1, 203.0.113.7, 10.0.0.2')).toBe('203.0.113.7');
    expect(proxies.clientOf('10.0.0.1', ['1.1.1.1', '203.0.113.7'])).toBe('203.0.113.7');
    // Every hop a trusted proxy: the left-most is as near to the client as is known.
    expect(proxies.clientOf('10.0.0.1', '10.0.0.3, 10.0.0.2')).toBe('10.0.0.3');
    // Ports, brackets and a hop that is no address.
    expect(proxies.clientOf('10.0.0.1', '203.0.113.7:5123')).toBe('203.0.113.7');
    expect(proxies.clientOf('10.0.0.1', '[2001:db8::7]:443')).toBe('2001:db8::7');
    expect(proxies.clientOf('10.0.0.1', 'unknown, 10.0.0.2')).toBe('10.0.0.2');
    expect(proxies.clientOf('10.0.0.1', undefined)).toBe('10.0.0.1');
  });
});

describe('nearestValue', () => {
  it('is the last value a chain of proxies appended', () => {
    expect(nearestValue('https')).toBe('https');
    expect(nearestValue('http, https')).toBe('https');
    expect(nearestValue(['a.example', 'b.example'])).toBe('b.example');
    expect(nearestValue('')).toBeUndefined();
    expect(nearestValue(undefined)).toBeUndefined();
  });
});
