import { describe, expect, it } from 'vitest';
import { proxyFor } from './proxy-for.js';

const route = (noProxy: string) => ({ http: 'http://plain-proxy:3128/', https: 'http://tls-proxy:3128/', noProxy });
const through = (url: string, noProxy = '') => proxyFor(new URL(url), route(noProxy))?.host ?? null;

describe('proxyFor', () => {
  it("picks the proxy of the upstream's scheme, and none without a route", () => {
    expect(through('https://api.openai.com/v1')).toBe('tls-proxy:3128');
    expect(through('http://vllm.internal:8000/v1')).toBe('plain-proxy:3128');
    expect(proxyFor(new URL('https://api.openai.com'), null)).toBeNull();
    expect(proxyFor(new URL('http://vllm:8000'), { http: null, https: 'http://p:1/', noProxy: '' })).toBeNull();
  });

  it('reads NO_PROXY as curl does: hosts and their subdomains, leading dots, ports, addresses, *', () => {
    expect(through('https://api.openai.com', 'openai.com')).toBeNull();
    expect(through('https://api.openai.com', '.openai.com')).toBeNull();
    expect(through('https://api.openai.com', '*.openai.com')).toBeNull();
    expect(through('https://notopenai.com', 'openai.com')).toBe('tls-proxy:3128');
    expect(through('http://10.0.0.5:8000', 'localhost, 10.0.0.5')).toBeNull();
    expect(through('http://10.0.0.5:8000', '10.0.0.5:9000')).toBe('plain-proxy:3128');
    expect(through('http://10.0.0.5:8000', '10.0.0.5:8000')).toBeNull();
    expect(through('https://api.openai.com', 'api.openai.com:443')).toBeNull();
    expect(through('http://[::1]:8000', '[::1]')).toBeNull();
    expect(through('https://anything.example', '*')).toBeNull();
    expect(through('https://API.OpenAI.com', 'api.openai.com')).toBeNull();
  });
});
