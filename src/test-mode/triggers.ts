/**
 * Triggers (docs/partners.md, "Triggers"): a test subscription and the real change that emits an
 * event of a given type, made through the services the API's own operations use, so the event,
 * its payload and its webhooks are the ones a partner's integration will see live. The test mode's
 * pause policy refuses none of it: a partner asking for an event wants the event, whatever rules
 * the test mode is set up with for its other tests.
 */
import { randomUUID } from 'node:crypto';
import { formatTimestamp, type Clock } from '../lib/clock.js';
import { pollUntil } from '../lib/retry.js';
import { RETRY } from '../retry-policies.js';
import type { LifecycleService } from '../subscriptions/lifecycle.js';
import type { EventsRepository } from '../events/events.repository.js';
import type { EventType } from '../subscriptions/outbox.js';
import type { BulkAcceptor } from '../subscriptions/bulk.selection.js';
import type { SubscriptionSeeder } from '../subscriptions/subscriptions.seed.js';
import { noticeTimeOf } from '../subscriptions/notice.rules.js';
import { NO_PAUSE_POLICY, type PausePolicySource } from '../pause-policy/pause-policy.rules.js';
import type { ChangeCause, SubscriptionStatus } from '../subscriptions/subscriptions.rules.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { ScheduleRequest } from '../subscriptions/schedule.request.js';
import { testModeOnly, type RelayNow } from './test-mode.service.js';

const HOUR_MICROS = 3_600_000_000n;
const DAY_MICROS = 24n * HOUR_MICROS;
/** More events of one type than one change can cause: a page of them is all of them. */
const EVENTS_READ = 16;
/** A notice's hours when the test mode's resumeNoticeHours is off: a notice trigger still needs some. */
const NOTICE_HOURS_WHEN_OFF = 24;

/** What a trigger's steps can do to its subscription: the API's own operations, under the caller's key. */
export interface TriggerSteps {
  pause(schedule?: ScheduleRequest): Promise<void>;
  resume(): Promise<void>;
  dropSchedule(): Promise<void>;
  bulkResume(): Promise<void>;
  /** The test clock's time `days` ahead, as a schedule time. */
  daysAhead(days: number): string;
  /** The test clock's time `hours` ahead, as a schedule time. */
  hoursAhead(hours: number): string;
  /** The test mode's `resumeNoticeHours`, or NOTICE_HOURS_WHEN_OFF: the pauses after this call are noticed by it. */
  noticeHours(): Promise<number>;
  /** Advances the test mode's clock to `to`, applying what falls due by then (TestModeService.advance). */
  advanceTo(to: string): Promise<void>;
  /** A merge patch of the subscription (its cycle one more: a renewal recorded). */
  renew(): Promise<void>;
  cancel(): Promise<void>;
  /** Pauses it, then records its push to the billing system as failed for good, as the pusher does when Stripe refuses one. */
  billingSyncFails(): Promise<void>;
}

/** A push of a subscription's change (the event `failedEventId`) recorded as failed for good (src/billing/billing-sync-failed.ts). */
export type BillingFailure = (merchantId: string, subscriptionId: string, failedEventId: string) => Promise<void>;

/** An import of a file of one new subscription, applied at once (src/imports/): its subscription's id. */
export type ImportNow = (merchantId: string, apiKeyId: string) => Promise<string>;

export interface Trigger {
  /** The status the subscription is made in. */
  readonly from: SubscriptionStatus;
  /** Made by a create, as the merchant's billing system would (its `subscription.created`), not seeded. */
  readonly created?: true;
  readonly steps: (subscription: TriggerSteps) => Promise<void>;
}

/** Every event type, with the change that causes it: a new type is one line here (test/unit/triggers-table.test.ts checks it against the spec). */
export const TRIGGERS: { readonly [T in EventType]: Trigger } = {
  'subscription.paused': { from: 'fulfilled', steps: (s) => s.pause() },
  'subscription.resumed': { from: 'paused', steps: (s) => s.resume() },
  'subscription.pause_scheduled': { from: 'fulfilled', steps: (s) => s.pause({ pauseAt: s.daysAhead(1) }) },
  'subscription.resume_scheduled': { from: 'fulfilled', steps: (s) => s.pause({ resumeAt: s.daysAhead(1) }) },
  'subscription.schedule_removed': {
    from: 'fulfilled',
    steps: async (s) => {
      await s.pause({ pauseAt: s.daysAhead(1) });
      await s.dropSchedule();
    },
  },
  // A resume one hour past the notice window, and the clock moved to its notice: the schedule worker's own path.
  'subscription.resume_upcoming': {
    from: 'fulfilled',
    steps: async (s) => {
      const hours = await s.noticeHours();
      const resumeAt = s.hoursAhead(hours + 1);
      await s.pause({ resumeAt });
      await s.advanceTo(noticeTimeOf(resumeAt, hours));
    },
  },
  // A resume, which no pause policy refuses.
  'bulk_request.completed': { from: 'paused', steps: (s) => s.bulkResume() },
  'subscription.created': { from: 'fulfilled', created: true, steps: async () => undefined },
  'subscription.updated': { from: 'fulfilled', steps: (s) => s.renew() },
  'subscription.cancelled': { from: 'fulfilled', steps: (s) => s.cancel() },
  // Its subscription is the one the import creates (TriggersService.trigger), not a fixture.
  'subscription_import.completed': { from: 'fulfilled', steps: async () => undefined },
  'subscription.billing_sync_failed': { from: 'fulfilled', steps: (s) => s.billingSyncFails() },
};

/** What the resume_upcoming trigger needs beside the changes: the test mode's policy and its clock. */
export interface TriggerClock {
  readonly policies: Pick<PausePolicySource, 'policyOf'>;
  advance(merchantId: string, to: string): Promise<unknown>;
}

export interface Triggered {
  readonly subscriptionId: string;
  readonly eventIds: string[];
}

/** Who made the trigger's request: the cause its changes record, as any request's. */
export interface TriggerCaller {
  readonly merchantId: string;
  readonly apiKeyId: string;
}

export class TriggersService {
  constructor(
    private readonly subscriptions: SubscriptionsService,
    private readonly bulk: BulkAcceptor,
    private readonly seeder: SubscriptionSeeder,
    private readonly events: Pick<EventsRepository, 'page'>,
    private readonly relayNow: RelayNow,
    private readonly testClock: TriggerClock,
    private readonly lifecycle: LifecycleService,
    private readonly importNow: ImportNow,
    private readonly billingFailure: BillingFailure,
  ) {}

  async trigger({ merchantId, apiKeyId }: TriggerCaller, type: EventType): Promise<Triggered> {
    // An import's event is the import's, not a subscription's: its subscription is the one it creates, its event the newest of its type.
    if (type === 'subscription_import.completed') {
      const before = new Set(await this.eventIds(merchantId, type, {}));
      const subscriptionId = await this.importNow(testModeOnly(merchantId), apiKeyId);
      // The worker that completed it records its event just after: waited for as a bulk request's.
      const ids = await this.awaitEvents(
        () => this.eventIds(merchantId, type, {}),
        (all) => all.some((id) => !before.has(id)),
      );
      return { subscriptionId, eventIds: ids.filter((id) => !before.has(id)).slice(-1) };
    }
    const { from, steps, created } = TRIGGERS[type];
    const clock = await this.subscriptions.clock(testModeOnly(merchantId));
    const subscriptionId = created
      ? (
          await this.lifecycle.create({
            merchantId,
            subscription: { externalId: `trigger_${randomUUID()}`, planId: randomUUID() },
            cause: { kind: 'api', apiKeyId },
          })
        ).id
      : (await this.seeder.seed({ merchantId, count: 1, status: from, createdAt: clock.timestamp() }))[0]!.id;
    const bulkRequests: string[] = [];
    await steps(this.stepsOn(merchantId, apiKeyId, subscriptionId, clock, bulkRequests));
    if (bulkRequests.length > 0) return { subscriptionId, eventIds: await this.bulkEventIds(merchantId, type, bulkRequests) };
    // Recorded and sent before the answer, as an advance's are; a relay already under way for them stores each event once.
    await this.relayNow(new Map([[subscriptionId, merchantId]]));
    return { subscriptionId, eventIds: await this.eventIds(merchantId, type, { subscriptionId }) };
  }

  private stepsOn(merchantId: string, apiKeyId: string, id: string, clock: Clock, bulkRequests: string[]): TriggerSteps {
    const cause: ChangeCause = { kind: 'api', apiKeyId };
    // The policy's rules that refuse or fill in a pause are set aside; its notices are kept, so the events are what a pause gives.
    let hours: number | null | undefined;
    const policy = async () => {
      hours ??= (await this.testClock.policies.policyOf(merchantId)).resumeNoticeHours;
      return { ...NO_PAUSE_POLICY, resumeNoticeHours: hours };
    };
    return {
      pause: async (schedule) =>
        void (await this.subscriptions.apply(merchantId, id, 'PAUSE', { schedule, cause, clock, policyInstead: await policy() })),
      resume: async () => void (await this.subscriptions.apply(merchantId, id, 'RESUME', { cause, clock })),
      dropSchedule: async () => void (await this.subscriptions.dropSchedule(merchantId, id, cause)),
      bulkResume: async () => {
        const { requestId } = await this.bulk.accept(merchantId, 'RESUME', { ids: [id] }, undefined, apiKeyId);
        this.bulk.dispatch(merchantId, requestId);
        bulkRequests.push(requestId);
      },
      daysAhead: (days) => formatTimestamp(clock.micros() + BigInt(days) * DAY_MICROS),
      hoursAhead: (hours) => formatTimestamp(clock.micros() + BigInt(hours) * HOUR_MICROS),
      noticeHours: async () => {
        hours = (await policy()).resumeNoticeHours ?? NOTICE_HOURS_WHEN_OFF;
        return hours;
      },
      advanceTo: async (to) => void (await this.testClock.advance(merchantId, to)),
      renew: async () => void (await this.lifecycle.update({ merchantId, id, patch: { cycle: 2 }, cause })),
      cancel: async () => void (await this.lifecycle.cancel({ merchantId, id, cause })),
      billingSyncFails: async () => {
        await this.subscriptions.apply(merchantId, id, 'PAUSE', { cause, clock, policyInstead: await policy() });
        await this.relayNow(new Map([[id, merchantId]]));
        const [paused] = await this.eventIds(merchantId, 'subscription.paused', { subscriptionId: id });
        await this.billingFailure(merchantId, id, paused!);
      },
    };
  }

  /** The bulk requests' events of `type`, once the workers have recorded them (RETRY.triggerEvents). */
  private async bulkEventIds(merchantId: string, type: EventType, requestIds: readonly string[]): Promise<string[]> {
    return this.awaitEvents(
      async () => (await Promise.all(requestIds.map((requestId) => this.eventIds(merchantId, type, { requestId })))).flat(),
      (ids) => ids.length >= requestIds.length,
    );
  }

  /** Reads until `enough` (RETRY.triggerEvents): events the workers record after the call's own changes. */
  private awaitEvents(read: () => Promise<string[]>, enough: (ids: string[]) => boolean): Promise<string[]> {
    return pollUntil(RETRY.triggerEvents, read, enough);
  }

  /** Oldest first, as they happened. */
  private async eventIds(merchantId: string, type: EventType, by: { subscriptionId?: string; requestId?: string }): Promise<string[]> {
    const page = await this.events.page(merchantId, { type, ...by }, { limit: EVENTS_READ, startingAfter: undefined });
    return page.data.map((event) => event.id).reverse();
  }
}
