/**
 * Where the engine's conditional update is not atomic (src/db/workarounds.ts keyedMutex), every
 * write of the service to a document that a conditional update changes queues on the process's
 * KeyedMutex (src/lib/keyed-mutex.ts) by the document. Every kind of document the guard queues writes of, with the key they queue by: the one list of
 * what the per-process guard covers (docs/design.md §8 "Conditional updates" gives each update and
 * its condition). Subscriptions are queued by their bare id (src/subscriptions/subscriptions.service.ts
 * and the events relay); these keys carry a prefix, so none is ever a subscription's.
 */
export const GUARDED = Object.freeze({
  /** A merchant's (or test mode's) document: its key set (`keysVersion`), last-used times, test mode upsert (src/auth/merchants.repository.ts). */
  merchant: (merchantId: string) => `merchant:${merchantId}`,
  /** A test mode's clock: an advance moves it only from the time it read (src/clocks/test-clocks.repository.ts). */
  testClock: (testModeId: string) => `testClock:${testModeId}`,
  /** A webhook endpoint: changes by its merchant, and the delivery outcomes' failure count and disabling (src/webhooks/endpoints.repository.ts). */
  webhookEndpoint: (endpointId: string) => `webhookEndpoint:${endpointId}`,
  /** A merchant's pause policy: its replacing upsert (src/pause-policy/pause-policy.repository.ts). */
  pausePolicy: (merchantId: string) => `pausePolicy:${merchantId}`,
  /** A merchant's plan (`<merchantId>:<planId>`): its naming upsert (src/plans/plans.repository.ts). */
  plan: (planKey: string) => `plan:${planKey}`,
  /** A billing connection (`<merchantId>:<system>`): its connecting upsert (src/billing/stripe-connections.repository.ts). */
  billingConnection: (connectionKey: string) => `billingConnection:${connectionKey}`,
  /** A hold: released once, only while active (src/holds/holds.repository.ts). */
  hold: (holdId: string) => `hold:${holdId}`,
  /** A bulk request: its undo is set once, only where none is (src/bulk/bulk.repository.ts). */
  bulkRequest: (requestId: string) => `bulkRequest:${requestId}`,
  /** Every subscription import, on one key: its workers' leases, their renewals and its completion (src/imports/imports.store.ts). */
  subscriptionImports: () => 'subscriptionImports',
  /** A merchant's pause history: its records, each deciding pauses' ends over those decided from fewer steps, and its reads' stores of a day's cells (src/analytics/pause-history.repository.ts). */
  pauseHistory: (merchantId: string) => `pauseHistory:${merchantId}`,
  /** The schedule clock's one document: `$min` notes and the poll's versioned settle (src/clocks/schedule.clock.ts). */
  scheduleClock: () => 'scheduleClock',
});
