/**
 * The same rule as webhook URLs (src/webhooks/url-guard.ts) for a destination's brokers: every
 * address a broker's host resolves to must be public, unless WEBHOOKS_ALLOW_PRIVATE_URLS is set,
 * so that a merchant cannot make the workers connect into the operator's own network. Checked at
 * creation and again before each connection.
 */
import { lookup } from 'node:dns/promises';
import { isPublicAddress } from '../webhooks/url-guard.js';
import { WebhookUrlNotAllowedError } from '../webhooks/webhooks.errors.js';

/** Throws 400 0044 when a broker address is not allowed. */
export async function checkBrokers(addresses: readonly string[], allowPrivate: boolean): Promise<void> {
  for (const address of addresses) {
    const host = address.slice(0, address.lastIndexOf(':'));
    const port = Number(address.slice(address.lastIndexOf(':') + 1));
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw new WebhookUrlNotAllowedError(`${address} does not name a port between 1 and 65535.`);
    const resolved = await lookup(host, { all: true, verbatim: true }).catch(() => []);
    if (resolved.length === 0) throw new WebhookUrlNotAllowedError(`${address} does not resolve.`);
    const blocked = resolved.find((a) => !isPublicAddress(a.address));
    if (blocked && !allowPrivate)
      throw new WebhookUrlNotAllowedError(`${address} resolves to ${blocked.address}, which is not a public address.`);
  }
}
