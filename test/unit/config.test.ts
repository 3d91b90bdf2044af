import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.errors.js';
import { loadConfig } from '../../src/config.js';

describe('TRUSTED_PROXIES', () => {
  it('is empty by default: no proxy is believed', () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
  });

  it('takes a comma-separated list of CIDR ranges and single addresses, IPv4 and IPv6', () => {
    const config = loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.10 ,fd00::/8,::1' });
    expect(config.trustedProxies).toEqual(['10.0.0.0/8', '192.168.1.10/32', 'fd00::/8', '::1/128']);
    expect(Object.isFrozen(config.trustedProxies)).toBe(true);
  });

  it.each(['10.0.0.0/33', 'not-an-address', '10.0.0.0/8,', '::1/129', '10.0.0/8', '10.0.0.0/-1', '10.0.0.0/8/8'])(
    'fails at boot naming the variable for %j',
    (raw) => {
      expect(() => loadConfig({ TRUSTED_PROXIES: raw })).toThrow(ConfigError);
      expect(() => loadConfig({ TRUSTED_PROXIES: raw })).toThrow(/^TRUSTED_PROXIES /);
    },
  );
});
