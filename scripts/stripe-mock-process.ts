/**
 * Stripe's own API mock as a process of a script (the bench's Stripe axis, the Schemathesis run):
 * built from the Go module proxy into .cache/ on first use (scripts/go-tool.ts), on a free loopback
 * port. The tests start theirs through test/support/stripe-mock.ts, behind a recorder.
 */
import { spawn } from 'node:child_process';
import { freePort } from '../src/lib/net.js';
import { ensureGoTool, STRIPE_MOCK } from './go-tool.js';

export interface StripeMockProcess {
  /** What STRIPE_API_BASE is set to. */
  readonly base: string;
  stop(): void;
}

/** stripe-mock, once it answers a call (at most 30 s). */
export async function startStripeMockProcess(): Promise<StripeMockProcess> {
  const binary = await ensureGoTool(STRIPE_MOCK);
  const port = await freePort();
  // Its HTTPS listener, on by default at :12112, would make a second stripe-mock exit: a port of the system's choosing instead.
  const child = spawn(binary, ['-http-addr', `127.0.0.1:${port}`, '-https-addr', '127.0.0.1:'], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`stripe-mock exited with ${child.exitCode}`);
    const ok = await fetch(`${base}/v1/balance`, { headers: { authorization: 'Bearer sk_test_123' } }).then(
      async (r) => (await r.text(), r.ok),
      () => false,
    );
    if (ok) return { base, stop: () => void child.kill('SIGKILL') };
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('stripe-mock did not answer within 30 s');
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
