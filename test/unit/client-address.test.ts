/** The client behind trusted proxies: which X-Forwarded-For entry is believed, and when. */
import { describe, expect, it } from 'vitest';
import { TrustedProxies } from '../../src/http/client-address.js';

describe('TrustedProxies.clientOf (10.0.0.0/8 and fd00::/8 trusted)', () => {
  const proxies = new TrustedProxies(['10.0.0.0/8', 'fd00::/8']);

  it('believes the header only from a trusted peer', () => {
    expect(proxies.clientOf('203.0.113.9', ['198.51.100.1'])).toBe('203.0.113.9');
    expect(proxies.clientOf('10.1.2.3', ['198.51.100.1'])).toBe('198.51.100.1');
    expect(proxies.clientOf('::ffff:10.1.2.3', ['198.51.100.1'])).toBe('198.51.100.1');
  });

  it('takes the last hop that is not a trusted proxy, so an address the client wrote first is ignored', () => {
    expect(proxies.clientOf('10.1.2.3', ['1.1.1.1', '198.51.100.1', 'fd00::5', '10.9.9.9'])).toBe('198.51.100.1');
  });

  it('without a header, or with trusted hops only, falls back to the first hop or the peer', () => {
    expect(proxies.clientOf('10.1.2.3', [])).toBe('10.1.2.3');
    expect(proxies.clientOf('10.1.2.3', ['10.4.4.4', '10.5.5.5'])).toBe('10.4.4.4');
  });
});
