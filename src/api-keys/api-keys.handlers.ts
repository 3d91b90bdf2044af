/** Thin handlers for a merchant's API keys. */
import { pageRequestOf, type Handlers } from '../request-context/request-context.js';
import { DEFAULT_ROLL_HOURS } from './api-keys.rules.js';
import type { ApiKeysService } from './api-keys.service.js';

type ApiKeyOperations = 'listApiKeys' | 'createApiKey' | 'rollApiKey' | 'revokeApiKey';

export function apiKeyHandlers(apiKeys: ApiKeysService): Pick<Handlers, ApiKeyOperations> {
  return {
    listApiKeys: async ({ merchant, query }) => ({ status: 200, body: await apiKeys.list(merchant.id, pageRequestOf(query)) }),
    createApiKey: async ({ merchant }) => ({ status: 201, body: await apiKeys.create(merchant.id) }),
    rollApiKey: async ({ merchant, params, body }) => ({
      status: 201,
      body: await apiKeys.roll(merchant.id, params.keyId, body.expiresInHours ?? DEFAULT_ROLL_HOURS),
    }),
    revokeApiKey: async ({ merchant, params }) => {
      await apiKeys.revoke(merchant.id, params.keyId);
      return { status: 204, body: undefined };
    },
  };
}
