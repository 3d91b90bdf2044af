/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): `v1,` + base64 HMAC-SHA256 of
 * `{id}.{timestamp}.{body}`, keyed with the base64-decoded part of the secret after `whsec_`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** Whether one of the space-separated signatures in the header is the body's (for `subsvc webhooks listen`). */
export function verify(secret: string, id: string, timestamp: string, body: string, header: string): boolean {
  const expected = Buffer.from(sign(secret, id, Number(timestamp), body));
  return header.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
