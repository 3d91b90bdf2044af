/** A merchant's test mode connected to Stripe (stripe-mock takes test keys only), with subscriptions that carry Stripe ids. */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { bulkWriteInParts } from '../../src/db/mongo-helpers.js';
import { STATEMENTS_PER_COMMAND } from '../../src/db/workarounds.js';
import { testModeIdOf } from '../../src/merchants/livemode.js';
import { call } from './http.js';
import type { TestService } from './service.js';

export interface Connected {
  readonly apiKey: string;
  readonly merchantId: string;
  readonly ids: string[];
  readonly externalIds: string[];
  /** The connection's id (its webhookUrl's) and the secret Stripe signs its events with. */
  readonly connectionId: string;
  readonly webhookSecret: string;
}

/** Connects a new merchant's test mode, and seeds `count` subscriptions whose `externalId` is a Stripe subscription id, as an import sets it. */
export async function connectedToStripe(t: TestService, count: number, pauseBehavior?: string): Promise<Connected> {
  const { testApiKey: apiKey, merchantId: liveId } = await t.merchant();
  const merchantId = testModeIdOf(liveId);
  const webhookSecret = `whsec_${randomBytes(16).toString('hex')}`;
  const put = await call(t.baseUrl, '/v2/billing-connections/stripe', {
    method: 'PUT',
    apiKey,
    json: {
      apiKey: `sk_test_${randomBytes(12).toString('hex')}`,
      webhookSecret,
      ...(pauseBehavior ? { pauseBehavior } : {}),
    },
  });
  expect(put.status).toBe(200);
  const ids = await t.seed(merchantId, count);
  const externalIds = ids.map(() => `sub_${randomBytes(8).toString('hex')}`);
  // In parts: FerretDB v1 holds a connection per statement of one write command (src/db/workarounds.ts).
  await bulkWriteInParts(
    t.db.collection('subscriptions'),
    ids.map((_id, i) => ({ updateOne: { filter: { _id, merchantId } as never, update: { $set: { externalId: externalIds[i] } } } })),
    STATEMENTS_PER_COMMAND,
  );
  return { apiKey, merchantId, ids, externalIds, connectionId: put.body.id, webhookSecret };
}
