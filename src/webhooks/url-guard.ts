/**
 * No server-side request forgery: a webhook URL must be https and every address its host resolves
 * to must be public, unless WEBHOOKS_ALLOW_PRIVATE_URLS is set (local development). Checked at
 * registration and again at every delivery, which then connects to the address checked here (so
 * a DNS answer that changes in between cannot point the request elsewhere).
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { WebhookUrlNotAllowedError } from './webhooks.errors.js';

const NON_PUBLIC = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NON_PUBLIC.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NON_PUBLIC.addSubnet(net, bits, 'ipv6');

export interface ResolvedUrl {
  readonly url: URL;
  readonly address: string;
  readonly family: 4 | 6;
}

// Where src/http/problem.middleware.ts and the sender import it from.

const refuse = (url: string, why: string) => new WebhookUrlNotAllowedError(`${url} ${why}`);

export function isPublicAddress(address: string): boolean {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  return !NON_PUBLIC.check(address, family);
}

/** The URL and the address to connect to; throws 400 0044 when it is not allowed. */
export async function resolveWebhookUrl(raw: string, allowPrivate: boolean): Promise<ResolvedUrl> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse(raw, 'is not a URL.');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) throw refuse(raw, 'must use https.');
  if (url.username || url.password) throw refuse(raw, 'must not carry credentials.');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = await lookup(host, { all: true, verbatim: true }).catch(() => []);
  if (addresses.length === 0) throw refuse(raw, 'does not resolve.');
  const blocked = addresses.find((a) => !isPublicAddress(a.address));
  if (blocked && !allowPrivate) throw refuse(raw, `resolves to ${blocked.address}, which is not a public address.`);
  const { address, family } = addresses[0]!;
  return { url, address, family: family === 6 ? 6 : 4 };
}
