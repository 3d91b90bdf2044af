/**
 * `npm start` on the embedded database: a demo merchant, a few subscriptions (one of them
 * cancelled, to see a 409 and a bulk rejection), and a short summary printed last: the engine,
 * where the service and its docs are, the database's URI (for the admin commands and a shell), the
 * keys with the test mode's id, and curl commands to try.
 */
import type { AuthService } from '../auth/auth.service.js';
import { testModeIdOf } from '../merchants/livemode.js';
import type { ImportSeeder } from '../imports/imports.seed.js';

export interface DemoPlace {
  /** Where the service listens. */
  readonly baseUrl: string;
  /** The embedded database's URI; undefined on the operator's own MONGODB_URI. */
  readonly databaseUri: string | undefined;
  /** Which database engine answers, in a few words (`engine` in the summary). */
  readonly engine: string;
}

export async function createDemo(auth: AuthService, seeder: ImportSeeder, { baseUrl, databaseUri, engine }: DemoPlace): Promise<string> {
  const { merchantId, apiKey, testApiKey } = await auth.createMerchant('Demo merchant');
  const [first, second, third] = await seeder.seed({ merchantId, count: 3, status: 'fulfilled' });
  const [cancelled] = await seeder.seed({ merchantId, count: 1, status: 'cancelled' });
  const curl = (path: string, body?: string) =>
    `curl -s -X POST ${baseUrl}${path} -H 'x-api-key: ${apiKey}'` + (body ? ` -H 'content-type: application/json' -d '${body}'` : '');
  return [
    '',
    `subsvc is listening on ${baseUrl}`,
    `  engine:        ${engine}`,
    `  API reference: ${baseUrl}/docs  (and a console to send requests from it)`,
    ...(databaseUri ? [`  database:      MONGODB_URI=${databaseUri}  (embedded: the demo data go when the service stops)`] : []),
    `Demo merchant ${merchantId}`,
    `  API key:       ${apiKey}`,
    `  test API key:  ${testApiKey}  test mode id: ${testModeIdOf(merchantId)}  (docs/partners.md)`,
    `  subscriptions: ${first} ${second} ${third} (fulfilled)`,
    `                 ${cancelled} (cancelled)`,
    'Try:',
    `  ${curl(`/v2/subscriptions/${first}/pause`)}`,
    `  ${curl(`/v2/subscriptions/${first}/resume`)}`,
    `  ${curl(`/v2/subscriptions/${cancelled}/pause`)}    # 409: cancelled`,
    `  ${curl('/v2/subscriptions/bulk/pause', JSON.stringify({ subscriptions: [second, third, cancelled] }))}`,
    `  ${curl('/v2/subscriptions/bulk/resume', JSON.stringify({ subscriptions: [second, third] }))}`,
    `  curl -s -X POST ${baseUrl}/v2/test-helpers/subscriptions -H 'x-api-key: ${testApiKey}' -H 'content-type: application/json' -d '{"count":2}'`,
    '',
  ].join('\n');
}
