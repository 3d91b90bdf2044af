/**
 * The same rule as webhook URLs (src/webhooks/url-guard.ts) for a destination's brokers: every
 * address a broker's host resolves to must be public, unless WEBHOOKS_ALLOW_PRIVATE_URLS is set
 * or the operator lists that broker (KAFKA_ALLOWED_BROKERS), so that a merchant cannot make the
 * workers connect into the operator's own network. Checked at creation, before each connection to
 * the bootstrap servers, and for each broker their metadata names before it is connected to.
 */
import { lookup } from 'node:dns/promises';
import { isPublicAddress } from '../webhooks/url-guard.js';
import { WebhookUrlNotAllowedError } from '../webhooks/webhooks.errors.js';

/** Which brokers may be on private addresses: all of them, or those listed (`host:port`, lower-case). */
export interface BrokerPolicy {
  readonly allowPrivate: boolean;
  readonly allowedBrokers: readonly string[];
}

/** Throws 400 0044 when a broker address is not allowed. */
export async function checkBrokers(addresses: readonly string[], policy: BrokerPolicy): Promise<void> {
  for (const address of addresses) {
    const host = address.slice(0, address.lastIndexOf(':'));
    const port = Number(address.slice(address.lastIndexOf(':') + 1));
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new WebhookUrlNotAllowedError(`${address} does not name a port between 1 and 65535.`);
    const resolved = await lookup(host.replace(/^\[(.*)\]$/, '$1'), { all: true, verbatim: true }).catch(() => []);
    if (resolved.length === 0) throw new WebhookUrlNotAllowedError(`${address} does not resolve.`);
    const blocked = resolved.find((a) => !isPublicAddress(a.address));
    if (blocked && !policy.allowPrivate && !policy.allowedBrokers.includes(address.toLowerCase()))
      throw new WebhookUrlNotAllowedError(`${address} resolves to ${blocked.address}, which is not a public address.`);
  }
}
