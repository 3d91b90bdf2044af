/**
 * Every MongoDB call about portal links (docs/api.md "Customer portal"). A link's token is stored
 * only as its SHA-256 hash, like an API key (docs/design.md §3): the page finds its link by that
 * hash, and a revoked link is deleted, so that no process can find it again. An expired link is
 * kept a while, so that the merchant can still list it, then removed (db/retention.ts).
 */
import type { Collection, Db } from 'mongodb';
import type { components } from '../../generated/openapi.js';
import { deleteInParts, pageAlongIds } from '../db/mongo-helpers.js';
import { ensureTtlIndex } from '../db/retention.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { Page, PageRequest } from '../lib/pagination.js';

export type PortalLink = components['schemas']['PortalLink'];
export type PortalAction = components['schemas']['PortalAction'];

interface PortalLinkDocument extends Omit<PortalLink, 'id' | 'livemode'> {
  _id: string;
  merchantId: string;
  tokenHash: string;
  /** The value the page's forms carry in `csrf` (docs/api.md "Customer portal"): random, never derived from the token. */
  csrf: string;
  /** When the link is removed (a date, for the TTL index): KEPT_AFTER_EXPIRY_MS after `expiresAt`. */
  removeAt: Date;
}

/** How long an expired link stays listed before it is removed: as long as events are kept. */
export const KEPT_AFTER_EXPIRY_MS = 30 * 24 * 60 * 60 * 1000;

/** A link as the page uses it: the API's view plus the merchant that owns it. */
export interface StoredPortalLink extends PortalLink {
  readonly merchantId: string;
  readonly csrf: string;
}

function toLink({ _id, merchantId, tokenHash: _t, removeAt: _r, ...rest }: PortalLinkDocument): StoredPortalLink {
  return { id: _id, ...rest, livemode: livemodeOf(merchantId), merchantId };
}

function withoutSecrets({ merchantId: _m, csrf: _c, ...link }: StoredPortalLink): PortalLink {
  return link;
}

export class PortalLinksRepository {
  private readonly collection: Collection<PortalLinkDocument>;

  constructor(
    db: Db,
    /** Deletes in parts of at most this many documents (src/db/workarounds.ts); undefined: one statement. */
    private readonly documentsPerDelete?: number,
  ) {
    this.collection = db.collection<PortalLinkDocument>('portalLinks');
  }

  /**
   * Hashes of 32 random bytes do not collide: the unique index is for finding them, and refuses a
   * duplicate outright. A TTL index on `removeAt` where the server has them; the retention sweeper
   * calls `deleteExpired` where it does not.
   */
  async ensureIndexes(ttlIndexes: boolean): Promise<void> {
    await ensureTtlIndex(this.collection, ttlIndexes, 'removeAt');
    await this.collection.createIndex({ tokenHash: 1 }, { name: 'portal_token_hash', unique: true });
    await this.collection.createIndex({ merchantId: 1, subscriptionId: 1, _id: 1 }, { name: 'merchant_subscription_links' });
    await this.collection.createIndex({ merchantId: 1, _id: 1 }, { name: 'merchant_links' });
  }

  async insert(merchantId: string, link: PortalLink, secrets: { readonly tokenHash: string; readonly csrf: string }): Promise<void> {
    const { id, livemode: _l, ...rest } = link;
    const removeAt = new Date(Date.parse(link.expiresAt) + KEPT_AFTER_EXPIRY_MS);
    await this.collection.insertOne({ _id: id, merchantId, ...secrets, ...rest, removeAt });
  }

  /** The link whose token has this hash, whatever its state: the caller decides whether it still works. */
  async findByTokenHash(tokenHash: string): Promise<StoredPortalLink | undefined> {
    const doc = await this.collection.findOne({ tokenHash });
    return doc ? toLink(doc) : undefined;
  }

  /** Oldest first (ids are UUIDv7), optionally one subscription's. */
  page(merchantId: string, subscriptionId: string | undefined, page: PageRequest): Promise<Page<PortalLink>> {
    const filter = { merchantId, ...(subscriptionId ? { subscriptionId } : {}) };
    return pageAlongIds(this.collection, filter, page, false, (doc) => withoutSecrets(toLink(doc)));
  }

  /** Deletes the merchant's link; false when it has none with this id. */
  async delete(merchantId: string, id: string): Promise<boolean> {
    const result = await this.collection.deleteOne({ _id: id, merchantId });
    return result.deletedCount === 1;
  }

  /** Removes links expired over KEPT_AFTER_EXPIRY_MS ago; where the server has TTL indexes they go by themselves. */
  async deleteExpired(now = new Date()): Promise<number> {
    return deleteInParts(this.collection, { removeAt: { $lte: now } }, this.documentsPerDelete);
  }
}
