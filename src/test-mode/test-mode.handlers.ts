/** Thin handlers for the test helpers (test keys only: src/test-mode/test-mode.service.ts). */
import { livemodeOf } from '../merchants/livemode.js';
import type { Handlers } from '../request-context/request-context.js';
import { pausedView } from '../subscriptions/subscriptions.handlers.js';
import type { TestModeService } from './test-mode.service.js';
import type { TriggersService } from './triggers.js';
import { testModeOnly } from './test-mode.service.js';
import { SCENARIOS, TEST_OUTCOME_HEADER } from './test-outcomes.js';

/** The scenarios as GET /v2/test-helpers/scenarios lists them: each with the header value that asks for it. */
function scenarios(livemode: boolean) {
  return SCENARIOS.map(({ name, status, code, counted, description }) => ({
    name,
    header: `${TEST_OUTCOME_HEADER}: ${name}`,
    status,
    code,
    counted,
    description,
    livemode,
  }));
}

type TestHelperOperations =
  | 'createTestSubscriptions'
  | 'deleteTestSubscriptions'
  | 'getTestClock'
  | 'advanceTestClock'
  | 'createTestTrigger'
  | 'listTestScenarios'
  | 'resetTestMode';

export function testModeHandlers(testMode: TestModeService, triggers: TriggersService): Pick<Handlers, TestHelperOperations> {
  return {
    createTestSubscriptions: async ({ merchant, body }) => ({
      status: 201,
      body: { data: (await testMode.createSubscriptions(merchant.id, body)).map(pausedView) },
    }),
    deleteTestSubscriptions: async ({ merchant }) => ({
      status: 200,
      body: { deletedCount: await testMode.deleteSubscriptions(merchant.id), livemode: livemodeOf(merchant.id) },
    }),
    getTestClock: async ({ merchant }) => ({
      status: 200,
      body: { now: await testMode.now(merchant.id), livemode: livemodeOf(merchant.id) },
    }),
    advanceTestClock: async ({ merchant, body }) => ({
      status: 200,
      body: { ...(await testMode.advance(merchant.id, body.to)), livemode: livemodeOf(merchant.id) },
    }),
    resetTestMode: async ({ merchant }) => ({
      status: 200,
      body: { deleted: await testMode.reset(merchant.id), livemode: livemodeOf(merchant.id) },
    }),
    listTestScenarios: async ({ merchant }) => ({
      status: 200,
      body: { data: scenarios(livemodeOf(testModeOnly(merchant.id))), livemode: livemodeOf(merchant.id) },
    }),
    createTestTrigger: async ({ merchant, body }) => ({
      status: 201,
      body: {
        ...(await triggers.trigger({ merchantId: merchant.id, apiKeyId: merchant.apiKeyId }, body.type)),
        livemode: livemodeOf(merchant.id),
      },
    }),
  };
}
