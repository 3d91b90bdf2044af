/**
 * Failures on demand (docs/partners.md "Failures on demand"): a request made with a test key and
 * `Subsvc-Test-Outcome: <scenario>` is answered as the scenario says before anything is done, so
 * that a partner can prove their retries and error handling against the real service. A counted
 * scenario (`unavailable:2`) fails that many times for one Idempotency-Key, then lets the request
 * through; the count is kept in the database, so it holds whichever process answers.
 */
import { livemodeOf } from '../merchants/livemode.js';
import { InvalidTestOutcomeError, TestOutcomeWithLiveKeyError } from './test-mode.errors.js';
import type { TestOutcomesRepository } from './test-outcomes.repository.js';

export const TEST_OUTCOME_HEADER = 'Subsvc-Test-Outcome';

export type ScenarioName = 'rate_limited' | 'unavailable' | 'timeout' | 'conflict' | 'policy_refused' | 'not_found';

export interface Scenario {
  readonly name: ScenarioName;
  readonly status: number;
  readonly code: string;
  /** `name:N` fails N times for one Idempotency-Key, then lets the request through. */
  readonly counted: boolean;
  readonly description: string;
}

/** The most failures a counted scenario may ask for. */
export const MAX_COUNTED_FAILURES = 10;

/** Every scenario, in the order GET /v2/test-helpers/scenarios lists them. */
export const SCENARIOS: readonly Scenario[] = Object.freeze([
  {
    name: 'rate_limited',
    status: 429,
    code: '0060',
    counted: true,
    description: 'Too many requests, with Retry-After: 1 and the RateLimit headers.',
  },
  { name: 'unavailable', status: 503, code: '0910', counted: true, description: 'The service is unavailable; the request may be retried.' },
  {
    name: 'timeout',
    status: 504,
    code: '0920',
    counted: false,
    description: 'The answer is held (35 s unless TEST_OUTCOME_HOLD_MS says otherwise), then 504.',
  },
  { name: 'conflict', status: 409, code: '0030', counted: false, description: 'The subscription is cancelled and cannot change.' },
  { name: 'policy_refused', status: 422, code: '0032', counted: false, description: 'The pause breaks the pause policy.' },
  { name: 'not_found', status: 404, code: '0020', counted: false, description: 'No subscription of yours has this id.' },
]);

const BY_NAME = new Map(SCENARIOS.map((s) => [s.name as string, s]));

/** What the header asks for: a scenario, and for a counted one how many failures. */
export interface RequestedOutcome {
  readonly scenario: Scenario;
  readonly times: number | undefined;
}

function unknown(value: string): InvalidTestOutcomeError {
  const names = SCENARIOS.map((s) => (s.counted ? `${s.name}[:N]` : s.name)).join(', ');
  return new InvalidTestOutcomeError(
    `${TEST_OUTCOME_HEADER}: '${value}' is not a scenario; use one of ${names} (GET /v2/test-helpers/scenarios).`,
  );
}

export function parseOutcome(value: string): RequestedOutcome {
  const [name = '', count, ...rest] = value.trim().split(':');
  const scenario = BY_NAME.get(name);
  if (!scenario || rest.length > 0) throw unknown(value);
  if (count === undefined) return { scenario, times: undefined };
  const times = /^[1-9][0-9]?$/.test(count) ? Number(count) : NaN;
  if (!scenario.counted || !(times <= MAX_COUNTED_FAILURES)) {
    throw new InvalidTestOutcomeError(
      scenario.counted
        ? `${TEST_OUTCOME_HEADER}: ${name}:N takes N from 1 to ${MAX_COUNTED_FAILURES}; '${value}' does not.`
        : `${TEST_OUTCOME_HEADER}: ${name} fails every time; only rate_limited and unavailable take a count.`,
    );
  }
  return { scenario, times };
}

export interface OutcomeRequest {
  readonly merchantId: string;
  /** The header's value; undefined: not sent. */
  readonly value: string | undefined;
  readonly idempotencyKey: string | undefined;
}

export class TestOutcomes {
  constructor(private readonly attempts: TestOutcomesRepository) {}

  /** The scenario this request is to be answered with; undefined: none asked, or a counted one used up (the request goes through). */
  async outcomeOf({ merchantId, value, idempotencyKey }: OutcomeRequest): Promise<Scenario | undefined> {
    if (value === undefined) return undefined;
    if (livemodeOf(merchantId)) {
      throw new TestOutcomeWithLiveKeyError(
        `${TEST_OUTCOME_HEADER} is for test keys (sk_test_...); this key is live. Send the request without it.`,
      );
    }
    const { scenario, times } = parseOutcome(value);
    if (times === undefined) return scenario;
    if (!idempotencyKey) {
      throw new InvalidTestOutcomeError(`${TEST_OUTCOME_HEADER}: ${value} counts its failures per Idempotency-Key; send one.`);
    }
    const failing = await this.attempts.failOnceMore(merchantId, idempotencyKey, value.trim(), times);
    return failing ? scenario : undefined;
  }
}
