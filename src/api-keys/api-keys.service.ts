/**
 * A merchant's API keys: list, make, roll, revoke (docs/design.md §3). Each change reads the set,
 * decides with the rules, and writes it back only if no other change came in between (then it
 * starts again), so that two revocations at once can never leave a merchant without a key.
 * Changes of one merchant's keys made by this process wait for each other, on every engine: each
 * then reads the set the one before it wrote, so any number at once all succeed, and the
 * conditional update has only other processes' changes to catch.
 */
import { ApiKeyNotFoundError, ApiKeysContendedError } from './api-keys.errors.js';
import { nowTimestamp } from '../lib/clock.js';
import { KeyedMutex } from '../lib/keyed-mutex.js';
import { livemodeOf } from '../merchants/livemode.js';
import { pageOf, type Page, type PageRequest } from '../lib/pagination.js';
import { RETRY } from '../retry-policies.js';
import { untilSettled } from '../lib/retry.js';
import { isActive, newKey, type StoredKey } from '../auth/credentials.js';
import { revoked, rolled, withNewKey } from './api-keys.rules.js';
import type { KeySet, MerchantsRepository } from '../auth/merchants.repository.js';

type KeysDecision = (keys: readonly StoredKey[], added: StoredKey) => { keys: readonly StoredKey[]; old?: StoredKey };

/** What a list shows of a key: never the key, never its hash. */
export interface ApiKeyView {
  readonly id: string;
  readonly prefix: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly expiresAt: string | null;
  readonly livemode: boolean;
}

/** A key just made: the only answer that carries it. */
export interface CreatedApiKey {
  readonly id: string;
  readonly key: string;
  readonly prefix: string;
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly livemode: boolean;
}

/** Whoever remembers resolved keys (the request authentication): told of a key made or ended by this process. */
export interface KeyCache {
  forget(hash: string): void;
}

export class ApiKeysService {
  /** This process's changes, queued per merchant. */
  private readonly changes = new KeyedMutex();

  constructor(
    private readonly merchants: MerchantsRepository,
    private readonly resolved: KeyCache,
  ) {}

  async list(merchantId: string, page: PageRequest): Promise<Page<ApiKeyView>> {
    const set = await this.keySet(merchantId);
    const now = nowTimestamp();
    const after = page.startingAfter?.toLowerCase() ?? '';
    const keys = set.keys.filter((key) => isActive(key, now) && key.id > after).sort((a, b) => a.id.localeCompare(b.id));
    const views = keys.slice(0, page.limit + 1).map(({ id, prefix, createdAt, expiresAt }) => ({
      id,
      prefix,
      createdAt,
      lastUsedAt: set.lastUsedAt[id] ?? null,
      expiresAt,
      livemode: livemodeOf(merchantId),
    }));
    return pageOf(views, page.limit, (key) => key.id);
  }

  create(merchantId: string): Promise<CreatedApiKey> {
    return this.change(merchantId, (keys, added) => ({ keys: withNewKey(keys, added, nowTimestamp()) }));
  }

  roll(merchantId: string, keyId: string, expiresInHours: number): Promise<CreatedApiKey> {
    return this.change(merchantId, (keys, added) => rolled(keys, keyId.toLowerCase(), added, expiresInHours));
  }

  async revoke(merchantId: string, keyId: string): Promise<void> {
    await this.change(merchantId, (keys) => revoked(keys, keyId.toLowerCase(), nowTimestamp()));
  }

  private change(merchantId: string, decide: KeysDecision): Promise<CreatedApiKey> {
    return this.changes.run(merchantId, () => this.changeOnce(merchantId, decide));
  }

  private async changeOnce(merchantId: string, decide: KeysDecision): Promise<CreatedApiKey> {
    const made = newKey(Date.now(), livemodeOf(merchantId));
    const written = await untilSettled(RETRY.keySetChange, async () => {
      const set = await this.keySet(merchantId);
      const { keys, old } = decide(set.keys, made.stored);
      if (!(await this.merchants.replaceKeys(set, keys))) return undefined;
      this.resolved.forget(made.stored.hash);
      if (old) this.resolved.forget(old.hash);
      return true;
    });
    if (written) {
      const { id, prefix, createdAt, expiresAt } = made.stored;
      return { id, key: made.key, prefix, createdAt, expiresAt, livemode: livemodeOf(merchantId) };
    }
    throw new ApiKeysContendedError(`The API keys of merchant ${merchantId} kept changing under this request; retry.`);
  }

  private async keySet(merchantId: string): Promise<KeySet> {
    const set = await this.merchants.keySet(merchantId);
    if (!set) throw new ApiKeyNotFoundError(`No merchant with id ${merchantId}`);
    return set;
  }
}
