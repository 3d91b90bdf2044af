/**
 * A loopback HTTP proxy that checks every answer against the spec (test/support/contract.ts) on its
 * way back to the client: what the installed clients get from the mock or the service is checked as
 * every answer in the vitest suite is. An answer that breaks the contract is replaced by a 502
 * problem+json naming the violations (so that the client's scenario fails where it happened), and
 * is recorded for the runner's own report.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { contractViolations } from './contract.js';

export interface ContractProxy {
  readonly baseUrl: string;
  /** One line per answer that broke the contract: `METHOD path → status: violations`. */
  readonly violations: readonly string[];
  stop(): Promise<void>;
}

/** Headers that belong to one hop, or that fetch sets itself (the body is decoded and measured again). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length', 'content-encoding', 'upgrade']);

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function forwardedHeaders(request: IncomingMessage): Headers {
  const headers = new Headers();
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i]!;
    if (!HOP_BY_HOP.has(name.toLowerCase())) headers.append(name, request.rawHeaders[i + 1]!);
  }
  return headers;
}

function parsedBody(contentType: string, text: string): unknown {
  if (!contentType.includes('json') || text === '') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function startContractProxy(upstream: string): Promise<ContractProxy> {
  const violations: string[] = [];
  const relay = async (request: IncomingMessage, response: ServerResponse) => {
    const method = request.method ?? 'GET';
    const body = await readBody(request);
    const answer = await fetch(new URL(request.url ?? '/', upstream), {
      method,
      headers: forwardedHeaders(request),
      redirect: 'manual',
      ...(body.length > 0 ? { body: new Uint8Array(body) } : {}),
    });
    const text = await answer.text();
    const contentType = answer.headers.get('content-type') ?? '';
    const found = await contractViolations({
      method,
      path: request.url ?? '/',
      status: answer.status,
      contentType,
      body: parsedBody(contentType, text),
    });
    if (found.length > 0) {
      const line = `${method} ${request.url} → ${answer.status}: ${found.join('; ')}`;
      violations.push(line);
      const problem = {
        type: 'urn:subsvc:test:contract-violation',
        title: 'The answer breaks the contract',
        status: 502,
        detail: `${line}\n${text}`,
      };
      response.writeHead(502, { 'content-type': 'application/problem+json' }).end(JSON.stringify(problem));
      return;
    }
    const headers = [...answer.headers].filter(([name]) => !HOP_BY_HOP.has(name)).flat();
    response.writeHead(answer.status, headers).end(text);
  };
  const server = createServer((request, response) => {
    relay(request, response).catch((error: unknown) => {
      violations.push(`${request.method} ${request.url}: the proxy could not relay it (${String(error)})`);
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    violations,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
