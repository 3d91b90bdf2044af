import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describe('KAFKA_CA_FILE and KAFKA_ALLOWED_BROKERS', () => {
  it('reads the CA file at boot and keeps the allowed brokers lower-case; both empty by default', () => {
    expect([loadConfig({}).kafkaTrustedCa, loadConfig({}).kafkaAllowedBrokers]).toEqual([undefined, []]);
    const dir = mkdtempSync(join(tmpdir(), 'subsvc-config-'));
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    writeFileSync(join(dir, 'ca.pem'), pem);
    const config = loadConfig({ KAFKA_CA_FILE: join(dir, 'ca.pem'), KAFKA_ALLOWED_BROKERS: 'Kafka-1.internal:9093, 10.0.0.5:9092' });
    expect(config.kafkaTrustedCa).toBe(pem);
    expect(config.kafkaAllowedBrokers).toEqual(['kafka-1.internal:9093', '10.0.0.5:9092']);
  });

  it('fails at boot naming the variable for a missing or non-PEM file and for an address without a port', () => {
    const dir = mkdtempSync(join(tmpdir(), 'subsvc-config-'));
    writeFileSync(join(dir, 'not.pem'), 'hello');
    expect(() => loadConfig({ KAFKA_CA_FILE: join(dir, 'missing.pem') })).toThrow(/^KAFKA_CA_FILE must name a readable PEM file/);
    expect(() => loadConfig({ KAFKA_CA_FILE: join(dir, 'not.pem') })).toThrow(/^KAFKA_CA_FILE must name a file of PEM certificates/);
    expect(() => loadConfig({ KAFKA_ALLOWED_BROKERS: 'kafka-1.internal' })).toThrow(/^KAFKA_ALLOWED_BROKERS /);
  });
});
