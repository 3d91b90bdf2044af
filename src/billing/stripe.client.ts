/**
 * Stripe's API through the official `stripe` package, pinned to one API version, at STRIPE_API_BASE.
 * The package's own retries are off: a push is retried by the pusher, with its own backoff and its
 * record of each attempt (billing.pusher.ts).
 */
import Stripe from 'stripe';
import { StripeReadFailedError, StripeSignatureError } from './billing.errors.js';

/** The `Stripe-Version` every call carries: the version of the pinned `stripe` package (docs/billing.md). */
export const STRIPE_API_VERSION = '2026-11-18.endive' as const;

const CALL_TIMEOUT_MS = 20_000;
/** Stripe's largest page of a list. */
const PAGE_SIZE = 100;

export type PauseCollection = { readonly behavior: 'void' | 'keep_as_draft' | 'mark_uncollectible'; readonly resumesAt?: number } | null;

/** How a call ended: sent, to try again later (429, 5xx, no answer), or refused for good (another 4xx). */
export type CallOutcome =
  | { readonly kind: 'sent' }
  | { readonly kind: 'retry'; readonly error: string }
  | { readonly kind: 'refused'; readonly error: string; readonly status: number };

export class StripeApi {
  /** One client per API key: the package keeps its connections per client. */
  private readonly clients = new Map<string, Stripe>();
  private readonly origin: URL;

  constructor(apiBase: string) {
    this.origin = new URL(apiBase);
  }

  private client(apiKey: string): Stripe {
    let client = this.clients.get(apiKey);
    if (!client) {
      client = new Stripe(apiKey, {
        apiVersion: STRIPE_API_VERSION,
        host: this.origin.hostname,
        port: this.origin.port || (this.origin.protocol === 'https:' ? 443 : 80),
        protocol: this.origin.protocol === 'https:' ? 'https' : 'http',
        maxNetworkRetries: 0,
        timeout: CALL_TIMEOUT_MS,
        telemetry: false,
      });
      this.clients.set(apiKey, client);
    }
    return client;
  }

  /** Every subscription of the account, canceled ones included, a page at a time (`GET /v1/subscriptions?status=all`). */
  async *subscriptionPages(apiKey: string): AsyncGenerator<Stripe.Subscription[]> {
    let startingAfter: string | undefined;
    for (;;) {
      const page = await this.client(apiKey)
        .subscriptions.list({ status: 'all', limit: PAGE_SIZE, ...(startingAfter !== undefined ? { starting_after: startingAfter } : {}) })
        .catch((error: unknown) => {
          throw new StripeReadFailedError(`Stripe did not list the subscriptions: ${messageOf(error)}; nothing was imported.`);
        });
      yield page.data;
      if (!page.has_more || page.data.length === 0) return;
      startingAfter = page.data.at(-1)!.id;
    }
  }

  /** Sets or clears (null) the subscription's `pause_collection`, once per `idempotencyKey`. */
  async setPauseCollection(apiKey: string, subscriptionId: string, pause: PauseCollection, idempotencyKey: string): Promise<CallOutcome> {
    const params: Stripe.SubscriptionUpdateParams = {
      pause_collection: pause ? { behavior: pause.behavior, ...(pause.resumesAt ? { resumes_at: pause.resumesAt } : {}) } : '',
    };
    try {
      await this.client(apiKey).subscriptions.update(subscriptionId, params, { idempotencyKey });
      return { kind: 'sent' };
    } catch (error) {
      return outcomeOf(error);
    }
  }
}

/** How far the signed time of a Stripe event may be from now (Stripe's own default). */
const SIGNATURE_TOLERANCE_S = 300;

/** The event `body` is, if `signature` is Stripe's for it under `secret`; else StripeSignatureError with the package's reason. */
export function verifiedEvent(body: string, signature: string | undefined, secret: string): Stripe.Event {
  try {
    return Stripe.webhooks.constructEvent(body, signature ?? '', secret, SIGNATURE_TOLERANCE_S);
  } catch (error) {
    throw new StripeSignatureError(error instanceof Error ? error.message.slice(0, 500) : 'The signature does not match.');
  }
}

/** Keys in an error's text, which an API may echo back (stripe-mock quotes the whole Authorization header). */
const KEYS = /\b(sk|rk|pk)_(test|live)_[0-9A-Za-z]+/g;
const redacted = (text: string) => text.replace(KEYS, (key) => `${key.slice(0, 8)}…${key.slice(-4)}`).slice(0, 1000);

/** Stripe's message for a failed call, keys cut. */
function messageOf(error: unknown): string {
  return redacted(error instanceof Stripe.errors.StripeError ? error.message : String(error));
}

function outcomeOf(error: unknown): CallOutcome {
  if (!(error instanceof Stripe.errors.StripeError)) return { kind: 'retry', error: redacted(String(error)) };
  const status = error.statusCode;
  const message = redacted(error.message);
  // No answer (a connection refused or cut, a timeout), a rate limit or Stripe's own failure: later.
  if (status === undefined || status === 429 || status >= 500) return { kind: 'retry', error: message };
  return { kind: 'refused', error: message, status };
}
