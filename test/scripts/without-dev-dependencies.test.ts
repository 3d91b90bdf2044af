/**
 * The service as a production install runs it (`npm ci --omit=dev`, the image): without
 * mongodb-memory-server, a development dependency that only the embedded database imports.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/project-root.js';
import { databaseUri } from '../support/service.js';
import { startServe, type ServeProcess } from '../support/worker-process.js';

const withoutMemoryServer = {
  NODE_OPTIONS:
    `${process.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(join(projectRoot(), 'test', 'support', 'without-memory-server.mjs')).href}`.trim(),
};

let serve: ServeProcess | undefined;
afterAll(async () => {
  await serve?.stop();
});

describe('an install without dev dependencies', () => {
  it('with MONGODB_URI set, serve starts and answers ready: nothing on its path loads mongodb-memory-server', async () => {
    serve = await startServe(databaseUri(`test_${randomUUID().slice(0, 8)}`), withoutMemoryServer);
    const ready = await fetch(`${serve.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(serve.stderr.join('')).not.toMatch(/mongodb-memory-server/);
  });

  it('without MONGODB_URI, serve asking for mongodb-memory-server exits 1 with one line saying to set MONGODB_URI', async () => {
    const env: Record<string, string | undefined> = { ...process.env, ...withoutMemoryServer, EMBEDDED_DB: 'memory-server', PORT: '0' };
    delete env.MONGODB_URI;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/cli.ts', 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      'subsvc: mongodb-memory-server is not installed (an install without dev dependencies): set MONGODB_URI',
    ]);
  });
});
