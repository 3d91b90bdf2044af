/**
 * One delivery attempt: the Standard Webhooks request, to the address the URL guard checked
 * (never a second DNS answer), answered with any 2xx within 10 s for success.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { nowTimestamp } from '../lib/clock.js';
import { clipped } from '../lib/text.js';
import type { Event } from '../events/event.payload.js';
import type { WebhookAttempt } from './deliveries.repository.js';
import type { DeliveryTarget } from './endpoints.repository.js';
import { sign } from './signature.js';
import { CLOUDEVENTS_CONTENT_TYPE, toCloudEvent } from '../events/cloudevent.js';
import { injectTraceparent } from '../observability/tracing.js';
import { resolveWebhookUrl } from './url-guard.js';
import { WebhookUrlNotAllowedError } from './webhooks.errors.js';

export const DELIVERY_TIMEOUT_MS = 10_000;

/** `WebhookAttempt.error`'s bound in the contract: an error's message can quote the endpoint's URL. */
export const ATTEMPT_ERROR_MAX_LENGTH = 500;

export async function attemptDelivery(target: DeliveryTarget, event: Event, allowPrivateUrls: boolean): Promise<WebhookAttempt> {
  const at = nowTimestamp();
  const started = performance.now();
  const result = (outcome: { statusCode: number } | { error: string }): WebhookAttempt => ({
    at,
    statusCode: 'statusCode' in outcome ? outcome.statusCode : null,
    error: 'error' in outcome ? clipped(outcome.error, ATTEMPT_ERROR_MAX_LENGTH) : null,
    durationMs: Math.round(performance.now() - started),
  });
  try {
    const { url, address, family } = await resolveWebhookUrl(target.url, allowPrivateUrls);
    const cloud = target.format === 'cloudevents';
    // A CloudEvent in structured mode carries the event whole; the standard body is the event's own fields.
    const body = JSON.stringify(
      cloud ? toCloudEvent(event) : { type: event.type, timestamp: event.createdAt, data: event.data, livemode: event.livemode },
    );
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = injectTraceparent({
      'content-type': cloud ? CLOUDEVENTS_CONTENT_TYPE : 'application/json',
      'user-agent': 'subsvc-webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': sign(target.secret, event.id, timestamp, body),
    });
    return result(await post(url, address, family, headers, body));
  } catch (error) {
    return result({ error: error instanceof WebhookUrlNotAllowedError ? `URL not allowed: ${error.message}` : (error as Error).message });
  }
}

function post(url: URL, address: string, family: 4 | 6, headers: Record<string, string>, body: string): Promise<{ statusCode: number }> {
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(url, { method: 'POST', headers, lookup: pinned }, (response) => {
      response.resume();
      response.once('end', () => resolve({ statusCode: response.statusCode ?? 0 }));
      response.once('error', reject);
    });
    // The whole exchange, not just an idle socket, must fit in the time.
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`)), DELIVERY_TIMEOUT_MS);
    request.once('close', () => clearTimeout(timer));
    request.once('error', reject);
    request.end(body);
  });
}
