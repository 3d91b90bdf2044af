/**
 * Names for a merchant's plan ids (docs/api.md "Plans"), per mode: set and read through the API,
 * and shown on the customers' pages in place of the id.
 */
import type { components } from '../../generated/openapi.js';
import { nowTimestamp } from '../lib/clock.js';
import { livemodeOf } from '../merchants/livemode.js';
import type { Page, PageRequest } from '../lib/pagination.js';
import { normaliseId } from '../subscriptions/subscriptions.rules.js';
import { PlanNotFoundError } from './plans.errors.js';
import type { PlansRepository, StoredPlan } from './plans.repository.js';

export type Plan = components['schemas']['Plan'];

const withMode = (merchantId: string, { planId, name }: StoredPlan): Plan => ({ planId, name, livemode: livemodeOf(merchantId) });

export class PlansService {
  constructor(private readonly plans: PlansRepository) {}

  /** Plan ids are UUIDs (checked at the edge), stored lower-case like every id. */
  async put(merchantId: string, rawId: string, name: string): Promise<Plan> {
    return withMode(merchantId, await this.plans.put(merchantId, rawId.toLowerCase(), name, nowTimestamp()));
  }

  async get(merchantId: string, rawId: string): Promise<Plan> {
    const plan = await this.nameOf(merchantId, rawId);
    if (!plan) throw new PlanNotFoundError(`Plan ${rawId} not found`);
    return withMode(merchantId, plan);
  }

  async list(merchantId: string, page: PageRequest): Promise<Page<Plan>> {
    const found = await this.plans.page(merchantId, { ...page, startingAfter: page.startingAfter?.toLowerCase() });
    return { ...found, data: found.data.map((plan) => withMode(merchantId, plan)) };
  }

  /** The plan's name, for the customers' pages; undefined while it has none. */
  async nameOf(merchantId: string, rawId: string): Promise<StoredPlan | undefined> {
    const id = normaliseId(rawId);
    return id === undefined ? undefined : this.plans.find(merchantId, id);
  }
}
