/**
 * What a customer does on a portal page (docs/api.md "Customer portal"): see the subscription, and
 * pause or resume it as the link allows, through the same SubscriptionsService as the API (pause
 * policy, events, webhooks), with `cause: {kind: "portal", portalLinkId}`. The merchant's clock
 * governs every date shown (a test mode's test clock, src/clocks/).
 */
import { timingSafeEqual } from 'node:crypto';
import { KeyedMutex } from '../lib/keyed-mutex.js';
import { livemodeOf } from '../merchants/livemode.js';
import { formatTimestamp, parseRfc3339, type Clock } from '../lib/clock.js';
import {
  NO_PAUSE_HISTORY,
  pauseVerdict,
  readsHistory,
  type PauseHistory,
  type PausePolicy,
  type PausePolicySource,
} from '../pause-policy/pause-policy.rules.js';
import { InvalidTransitionError } from '../subscriptions/subscriptions.errors.js';
import { PausePolicyError } from '../pause-policy/pause-policy.errors.js';
import type { Subscription } from '../subscriptions/subscriptions.rules.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import type { StoredPortalLink } from './portal-links.repository.js';
import { blockedInWords, daysAfter, pauseMenu, plainDate, refusalInWords, stateInWords, type Refusal } from './portal.rules.js';

/** What the page shows. */
export interface PageView {
  readonly merchantName: string;
  /** The plan's name, or its id while the merchant has not named it. */
  readonly plan: string;
  readonly state: string;
  /** The merchant's reason for the pause, while paused with one. */
  readonly reason: string | undefined;
  readonly testMode: boolean;
  /** The pause lengths offered, each with the date it would end; undefined: no pause form. */
  readonly pauseMenu: readonly { readonly days: number; readonly until: string }[] | undefined;
  /** Why the policy lets no pause start now, and from when it will: shown instead of buttons it would refuse. */
  readonly pauseBlocked?: string;
  /** Why the post that led here changed nothing, in words. */
  readonly refusal?: string;
  readonly resumable: boolean;
  readonly cancelled: boolean;
  readonly csrf: string;
}

export type Notice = 'paused' | 'resumed';

/** What a post did: done, or refused and why; either way the page it leads back to shows it. */
export type ActionOutcome = { readonly done: Notice } | { readonly refused: Refusal };

export interface PortalDependencies {
  readonly subscriptions: Pick<SubscriptionsService, 'get' | 'apply' | 'clock'>;
  readonly policies: PausePolicySource;
  /** The merchant's display name (its live name for a test mode). */
  readonly merchantName: (merchantId: string) => Promise<string>;
  /** The name the merchant gave the plan in the link's mode; undefined while it has none. */
  readonly planName: (merchantId: string, planId: string) => Promise<string | undefined>;
  /** What the pause policy reads of a subscription's past, from where a pause's check reads it. */
  readonly pauseHistory: (merchantId: string, subscriptionId: string) => Promise<PauseHistory | undefined>;
}

/** Whether the form's `csrf` is the link's, compared in constant time. */
export function csrfMatches(link: StoredPortalLink, sent: string | undefined): boolean {
  const expected = Buffer.from(link.csrf);
  const given = Buffer.from(sent ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function resumeAtOf(subscription: Subscription): bigint | undefined {
  const resumeAt = subscription.schedule?.resumeAt;
  return resumeAt ? parseRfc3339(resumeAt) : undefined;
}

export class PortalActions {
  /** One post per link at a time in this process, so that a double click changes the subscription once. */
  private readonly perLink = new KeyedMutex();

  constructor(private readonly deps: PortalDependencies) {}

  /** The page; `refusal`: why the post that led here changed nothing. */
  async view(link: StoredPortalLink, refusal?: Refusal): Promise<PageView> {
    const { subscriptions, policies, merchantName } = this.deps;
    const [subscription, clock, policy, name] = await Promise.all([
      subscriptions.get(link.merchantId, link.subscriptionId),
      subscriptions.clock(link.merchantId),
      policies.policyOf(link.merchantId),
      merchantName(link.merchantId),
    ]);
    const plan = (await this.deps.planName(link.merchantId, subscription.planId)) ?? subscription.planId;
    const now = clock.micros();
    const pausable = subscription.status === 'fulfilled' && link.actions.includes('pause');
    const offer = pausable ? await this.pauseOffer(link, subscription, policy, clock) : undefined;
    return {
      merchantName: name,
      plan,
      state: stateInWords(subscription, now, resumeAtOf(subscription)),
      reason: subscription.pauseReason,
      testMode: !livemodeOf(link.merchantId),
      pauseMenu: offer?.menu,
      ...(offer?.blocked !== undefined ? { pauseBlocked: offer.blocked } : {}),
      ...(refusal !== undefined ? { refusal: refusalInWords(refusal, policy) } : {}),
      resumable: subscription.status === 'paused' && link.actions.includes('resume'),
      cancelled: subscription.status === 'cancelled',
      csrf: link.csrf,
    };
  }

  /**
   * The lengths a click would pause for: the policy's own verdict on each (pauseVerdict, what a
   * pause is checked with), so that no button is offered that the pause would refuse; when it
   * refuses them all, why, and from when a pause can start.
   */
  private async pauseOffer(link: StoredPortalLink, subscription: Subscription, policy: PausePolicy, clock: Clock) {
    const now = clock.micros();
    const history = readsHistory(policy)
      ? ((await this.deps.pauseHistory(link.merchantId, link.subscriptionId)) ?? NO_PAUSE_HISTORY)
      : NO_PAUSE_HISTORY;
    const verdicts = pauseMenu(policy).map((days) => {
      const resumeAt = formatTimestamp(daysAfter(now, days));
      return { days, verdict: pauseVerdict(policy, subscription.status, { resumeAt }, history, clock.timestamp()) };
    });
    const menu = verdicts
      .filter(({ verdict }) => !('breach' in verdict))
      .map(({ days }) => ({ days, until: plainDate(daysAfter(now, days), now) }));
    const breach = verdicts.map(({ verdict }) => ('breach' in verdict ? verdict.breach : undefined)).find((b) => b !== undefined);
    return { menu, blocked: menu.length === 0 && breach ? blockedInWords(breach, policy, now) : undefined };
  }

  /** Pauses for `days` (one of the menu's), ending then. Already paused: nothing changes. */
  pause(link: StoredPortalLink, days: number | undefined): Promise<ActionOutcome> {
    if (!link.actions.includes('pause')) return Promise.resolve({ refused: 'pauseNotAllowed' });
    return this.perLink.run(link.id, async () => {
      const { subscriptions, policies } = this.deps;
      const [subscription, policy] = await Promise.all([
        subscriptions.get(link.merchantId, link.subscriptionId),
        policies.policyOf(link.merchantId),
      ]);
      if (subscription.status === 'cancelled') return { refused: 'ended' };
      if (subscription.status === 'paused') return { done: 'paused' };
      if (days === undefined || !pauseMenu(policy).includes(days)) return { refused: 'length' };
      const clock = await subscriptions.clock(link.merchantId);
      const resumeAt = formatTimestamp(daysAfter(clock.micros(), days));
      return this.applied('PAUSE', link, { resumeAt }, clock);
    });
  }

  /** Resumes now. Already active: nothing changes. */
  resume(link: StoredPortalLink): Promise<ActionOutcome> {
    if (!link.actions.includes('resume')) return Promise.resolve({ refused: 'resumeNotAllowed' });
    return this.perLink.run(link.id, async () => {
      const subscription = await this.deps.subscriptions.get(link.merchantId, link.subscriptionId);
      if (subscription.status === 'cancelled') return { refused: 'ended' };
      if (subscription.status === 'fulfilled') return { done: 'resumed' };
      const clock = await this.deps.subscriptions.clock(link.merchantId);
      return this.applied('RESUME', link, undefined, clock);
    });
  }

  private async applied(
    operation: 'PAUSE' | 'RESUME',
    link: StoredPortalLink,
    schedule: { readonly resumeAt: string } | undefined,
    clock: Clock,
  ): Promise<ActionOutcome> {
    const cause = { kind: 'portal', portalLinkId: link.id } as const;
    try {
      await this.deps.subscriptions.apply(link.merchantId, link.subscriptionId, operation, { schedule, cause, clock });
      return { done: operation === 'PAUSE' ? 'paused' : 'resumed' };
    } catch (error) {
      if (error instanceof PausePolicyError) return { refused: error.breach.rule };
      if (error instanceof InvalidTransitionError) return { refused: 'ended' };
      throw error;
    }
  }
}
