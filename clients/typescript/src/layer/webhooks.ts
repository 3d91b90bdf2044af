/**
 * Webhooks as the service signs them (Standard Webhooks): `verify` checks the signature over
 * `webhook-id.webhook-timestamp.body` with the endpoint's `whsec_` secret and the timestamp's age,
 * then gives the payload as its generated type.
 */
import { BulkRequestWebhookFromJSON, SubscriptionWebhookFromJSON, type BulkRequestWebhook, type SubscriptionWebhook } from '../index.js';

export type WebhookEvent = SubscriptionWebhook | BulkRequestWebhook;

/** A delivery that is not the service's: a missing header, a bad signature, or a timestamp too old or too new. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** How far a delivery's timestamp may be from now, in seconds (the Standard Webhooks default). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()]);
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) throw new WebhookVerificationError(`the ${name} header is missing`);
  return text;
}

const fromBase64 = (text: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

/**
 * The delivery's event, once its signature and timestamp check out; a WebhookVerificationError otherwise.
 * `body` is the request body exactly as received (not parsed and re-serialised).
 */
export async function verify(body: string | Uint8Array, headers: HeaderBag, secret: string, now: Date = new Date()): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const seconds = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(now.getTime() / 1000 - seconds) > WEBHOOK_TOLERANCE_SECONDS) {
    throw new WebhookVerificationError('the webhook-timestamp is too old or too new');
  }
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  let keyBytes: Uint8Array<ArrayBuffer>;
  try {
    keyBytes = fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch {
    throw new WebhookVerificationError('the secret is not a whsec_ secret');
  }
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const expected = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${text}`)));
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || !signature) return false;
    try {
      return sameBytes(fromBase64(signature), expected);
    } catch {
      return false;
    }
  });
  if (!matches) throw new WebhookVerificationError('no webhook-signature matches the body');
  let json: { type?: unknown };
  try {
    json = JSON.parse(text) as { type?: unknown };
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
  return String(json.type).startsWith('bulk_request.') ? BulkRequestWebhookFromJSON(json) : SubscriptionWebhookFromJSON(json);
}
