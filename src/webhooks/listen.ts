/**
 * `subsvc webhooks listen`: a developer's receiver, like `stripe listen`. Registers an endpoint
 * for the merchant at http://127.0.0.1:PORT/ (so the service must allow private URLs:
 * WEBHOOKS_ALLOW_PRIVATE_URLS=true, the default with the embedded database), verifies each
 * delivery's signature, prints one JSON line per delivery, and removes the endpoint when stopped.
 */
import { createServer } from 'node:http';
import type { Db } from 'mongodb';
import { EndpointsRepository } from './endpoints.repository.js';
import { EndpointsService } from './endpoints.service.js';
import { verify } from './signature.js';

export interface Listening {
  readonly endpointId: string;
  stop(): Promise<void>;
}

export async function listenForWebhooks(db: Db, merchantId: string, port: number, print: (line: unknown) => void): Promise<Listening> {
  const endpoints = new EndpointsService(new EndpointsRepository(db), true);
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const header = (name: string) => String(req.headers[name] ?? '');
      const verified = verify(secret, header('webhook-id'), header('webhook-timestamp'), body, header('webhook-signature'));
      let event: unknown = body;
      try {
        event = JSON.parse(body);
      } catch {
        // printed as received
      }
      print({ webhookId: header('webhook-id'), verified, event });
      res.writeHead(verified ? 200 : 400).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const created = await endpoints.create(merchantId, {
    url: `http://127.0.0.1:${port}/`,
    events: ['*'],
    description: 'subsvc webhooks listen',
  });
  const secret = created.secret;
  return {
    endpointId: created.id,
    async stop() {
      await endpoints.delete(merchantId, created.id);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
