/**
 * Portal links (docs/api.md "Customer portal"): made, listed and revoked by the merchant through
 * the API, and resolved from their token by the page. The token is 32 random bytes, shown once in
 * the url; only its SHA-256 hash is kept, as for API keys (docs/design.md §3). Nothing here is
 * cached: a revoked link stops working at once in every process.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import { formatTimestamp, nowMicros } from '../lib/clock.js';
import { uuidv7 } from '../lib/ids.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import type { SubscriptionsService } from '../subscriptions/subscriptions.service.js';
import { PortalLinkNotFoundError, PortalSubscriptionCancelledError } from './portal.errors.js';
import type { PortalAction, PortalLink, PortalLinksRepository, StoredPortalLink } from './portal-links.repository.js';

export type PortalLinkWithUrl = components['schemas']['PortalLinkWithUrl'];

export const DEFAULT_EXPIRES_IN_MINUTES = 1440;
const DEFAULT_ACTIONS: readonly PortalAction[] = Object.freeze(['pause', 'resume']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where portal pages live, below the service's public URL. */
export const PORTAL_PATH = '/portal';

export interface NewPortalLink {
  readonly actions?: readonly PortalAction[];
  readonly expiresInMinutes?: number;
}

/** The stored form of a token: its SHA-256, hex. Any string hashes, a malformed token too, so every lookup costs the same. */
export function tokenHashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class PortalLinksService {
  constructor(
    private readonly links: PortalLinksRepository,
    private readonly subscriptions: Pick<SubscriptionsService, 'get'>,
    /** PUBLIC_URL (src/config.ts); undefined: each link takes the origin its request was sent to. */
    private readonly publicUrl: string | undefined,
  ) {}

  /** A link to the subscription's page: 404 0020 for none of the merchant's, 409 0030 for a cancelled one. */
  async create(merchantId: string, rawSubscriptionId: string, request: NewPortalLink, origin: string): Promise<PortalLinkWithUrl> {
    const subscription = await this.subscriptions.get(merchantId, rawSubscriptionId);
    if (subscription.status === 'cancelled')
      throw new PortalSubscriptionCancelledError(
        `Subscription ${subscription.id} is cancelled and cannot be changed: it gets no portal link`,
      );
    const token = randomBytes(32).toString('base64url');
    const created = nowMicros();
    const minutes = request.expiresInMinutes ?? DEFAULT_EXPIRES_IN_MINUTES;
    const link: PortalLink = {
      id: uuidv7(),
      subscriptionId: subscription.id,
      actions: DEFAULT_ACTIONS.filter((action) => (request.actions ?? DEFAULT_ACTIONS).includes(action)),
      expiresAt: formatTimestamp(created + BigInt(minutes) * 60_000_000n),
      createdAt: formatTimestamp(created),
      livemode: livemodeOf(merchantId),
    };
    await this.links.insert(merchantId, link, { tokenHash: tokenHashOf(token), csrf: randomBytes(32).toString('base64url') });
    const { id, subscriptionId, actions, expiresAt, createdAt, livemode } = link;
    return { id, url: `${this.publicUrl ?? origin}${PORTAL_PATH}/${token}`, subscriptionId, actions, expiresAt, createdAt, livemode };
  }

  list(merchantId: string, subscriptionId: string | undefined, page: PageRequest): Promise<Page<PortalLink>> {
    return this.links.page(merchantId, subscriptionId?.toLowerCase(), { ...page, startingAfter: page.startingAfter?.toLowerCase() });
  }

  async revoke(merchantId: string, rawId: string): Promise<void> {
    const revoked = UUID.test(rawId) && (await this.links.delete(merchantId, rawId.toLowerCase()));
    if (!revoked) throw new PortalLinkNotFoundError(`Portal link ${rawId} not found`);
  }

  /**
   * The working link of the token with this hash (tokenHashOf), or undefined (unknown, expired,
   * revoked, malformed): one lookup whatever the token, so the time taken tells nothing of which.
   */
  async resolve(tokenHash: string): Promise<StoredPortalLink | undefined> {
    const link = await this.links.findByTokenHash(tokenHash);
    return link && link.expiresAt > formatTimestamp(nowMicros()) ? link : undefined;
  }
}
