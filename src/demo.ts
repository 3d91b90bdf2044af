/** `npm start` on the embedded database: a demo merchant, a few subscriptions, and curl commands to try. */
import type { AuthService } from './auth/auth.service.js';
import type { SubscriptionSeeder } from './subscriptions/subscriptions.seed.js';

export async function createDemo(auth: AuthService, seeder: SubscriptionSeeder, baseUrl: string): Promise<string> {
  const { merchantId, apiKey } = await auth.createMerchant('Demo merchant');
  const fulfilled = await seeder.seed({ merchantId, count: 3, status: 'fulfilled' });
  const [first, second, third] = fulfilled.map((s) => s.id);
  const curl = (path: string, body?: string) =>
    `curl -s -X POST ${baseUrl}${path} -H 'x-api-key: ${apiKey}'` +
    (body ? ` -H 'content-type: application/json' -d '${body}'` : '');
  return [
    '',
    'Demo data on the embedded database (gone when the service stops):',
    `  merchant:      ${merchantId}`,
    `  API key:       ${apiKey}`,
    `  subscriptions: ${first} ${second} ${third} (fulfilled)`,
    '',
    'Try:',
    `  ${curl(`/v2/subscriptions/${first}/pause`)}`,
    `  ${curl(`/v2/subscriptions/${first}/resume`)}`,
    `  ${curl('/v2/subscriptions/bulk/pause', JSON.stringify({ subscriptions: [second, third] }))}`,
    `  ${curl('/v2/subscriptions/bulk/resume', JSON.stringify({ subscriptions: [second, third] }))}`,
    '',
  ].join('\n');
}
