/**
 * A replay: a range of a merchant's events delivered once more to one endpoint, after an outage on
 * the merchant's side (docs/webhooks.md, "Replaying events"). At most REPLAY_LIMIT events, within the
 * EVENT_RETENTION_MS that events are kept; sent in the events' order by the webhooks worker.
 */
import type { components } from '../../generated/openapi.js';
import { InvalidRequestError } from '../errors.js';
import { formatTimestamp, parseRfc3339 } from '../lib/clock.js';
import { livemodeOf } from '../merchants/livemode.js';
import { EVENT_RETENTION_MS, type EventsRepository } from '../events/events.repository.js';
import type { EventType } from '../subscriptions/outbox.js';
import type { EndpointsService } from './endpoints.service.js';
import type { WebhooksWorker } from './webhooks.worker.js';

type ReplayRequest = components['schemas']['WebhookReplayRequest'];
type Replay = components['schemas']['WebhookReplay'];

export const REPLAY_LIMIT = 10_000;

/** Every event type, checked complete against the spec's enum by the compiler: what `*` subscribes to. */
const EVERY_TYPE = Object.keys({
  'subscription.paused': true,
  'subscription.resumed': true,
  'subscription.pause_scheduled': true,
  'subscription.resume_scheduled': true,
  'subscription.schedule_removed': true,
  'subscription.resume_upcoming': true,
  'bulk_request.completed': true,
  'subscription.created': true,
  'subscription.updated': true,
  'subscription.cancelled': true,
  'subscription_import.completed': true,
  'subscription.billing_sync_failed': true,
} satisfies Record<EventType, true>) as EventType[];

/** The range as stored timestamps; a 400 when it is out of order or reaches past the events kept. */
export function replayRange({ from, to }: Pick<ReplayRequest, 'from' | 'to'>, nowMs: number): { from: string; to: string } {
  const start = parseRfc3339(from);
  const end = parseRfc3339(to);
  if (start === undefined || end === undefined) throw new InvalidRequestError('`from` and `to` must be RFC 3339 timestamps.');
  if (start > end) throw new InvalidRequestError('`from` is after `to`.', [{ path: '/from', message: 'must not be after `to`' }]);
  const oldestKept = BigInt(nowMs - EVENT_RETENTION_MS) * 1000n;
  if (start < oldestKept) {
    throw new InvalidRequestError(`\`from\` is before ${formatTimestamp(oldestKept)}: events are kept 30 days.`, [
      { path: '/from', message: 'must be within the 30 days events are kept' },
    ]);
  }
  return { from: formatTimestamp(start), to: formatTimestamp(end) };
}

export class ReplayService {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly events: EventsRepository,
    private readonly worker: Pick<WebhooksWorker, 'replay'>,
  ) {}

  async replay(merchantId: string, endpointId: string, request: ReplayRequest): Promise<Replay> {
    const endpoint = await this.endpoints.get(merchantId, endpointId);
    const { from, to } = replayRange(request, Date.now());
    const subscribed = endpoint.events.includes('*') ? EVERY_TYPE : EVERY_TYPE.filter((type) => endpoint.events.includes(type));
    const types = request.types ? subscribed.filter((type) => request.types!.includes(type)) : subscribed;
    const livemode = livemodeOf(merchantId);
    if (types.length === 0) return { queuedCount: 0, livemode };
    const count = await this.events.countCreatedBetween(merchantId, from, to, types);
    if (count > REPLAY_LIMIT) {
      throw new InvalidRequestError(`The range holds ${count} events for this endpoint; a replay sends at most ${REPLAY_LIMIT}: split it.`);
    }
    const events = await this.events.idsCreatedBetween(merchantId, from, to, types);
    return { queuedCount: await this.worker.replay(merchantId, endpoint.id, events), livemode };
  }
}
