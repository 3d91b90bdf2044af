/**
 * A V8 CPU profile (`node --cpu-prof`) of the service, as CPU per request by stage. Each sample
 * goes to the stage of the innermost frame that belongs to one: node's plumbing (streams, events,
 * timers, promises, async hooks, crypto, builtins without a script) is passed through, so that a
 * socket write is the HTTP response's or the driver's according to who asked for it. Idle time is
 * left out; the shares are of the CPU the process spent.
 */
import { readFileSync } from 'node:fs';

interface Frame {
  readonly functionName: string;
  readonly url: string;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: Frame;
  readonly children?: number[];
}
interface CpuProfile {
  readonly nodes: ProfileNode[];
  readonly startTime: number;
  readonly samples: number[];
  readonly timeDeltas: number[];
}
/** A window on the profile's clock (µs); unset, the whole profile. */
export interface Window {
  readonly from: number;
  readonly to: number;
}

/** The stages, in the order of the table; each with what marks its frames. */
export const STAGES: readonly { readonly stage: string; readonly matches: (f: Frame) => boolean }[] = [
  { stage: 'garbage collection', matches: (f) => f.functionName === '(garbage collector)' },
  {
    stage: 'logging (pino, request log, AsyncLocalStorage)',
    matches: (f) => /node_modules\/(pino|sonic-boom|thread-stream|fast-redact)|\/src\/logger\.[jt]s/.test(f.url),
  },
  { stage: 'metrics and tracing', matches: (f) => /\/src\/observability\/|node_modules\/(prom-client|@opentelemetry)/.test(f.url) },
  { stage: 'rate limit', matches: (f) => /\/src\/http\/rate-limit\.[jt]s/.test(f.url) },
  { stage: 'idempotency', matches: (f) => f.url.includes('/src/idempotency/') },
  {
    stage: 'webhook deliveries and job queue (workers, (f) only)',
    matches: (f) => /\/src\/webhooks\/|node_modules\/(agenda|@agendajs|undici)\/|^node:internal\/deps\/undici/.test(f.url),
  },
  { stage: 'authentication', matches: (f) => f.url.includes('/src/auth/') || f.url.includes('/src/api-keys/') },
  {
    stage: 'request validation',
    matches: (f) =>
      (f.url === '' && /^validate\d*$/.test(f.functionName)) ||
      /node_modules\/(ajv|ajv-formats)\/|openapi-backend\/validation\.js/.test(f.url) ||
      /validation-errors\.[jt]s/.test(f.url),
  },
  { stage: 'routing', matches: (f) => /fast-router\.[jt]s|openapi-backend\/router\.js/.test(f.url) },
  { stage: 'serialisation (JSON.stringify)', matches: (f) => f.url === '' && f.functionName === 'stringify' },
  { stage: 'database call (driver, bson)', matches: (f) => /node_modules\/(mongodb|bson|@mongodb-js)\//.test(f.url) },
  {
    stage: 'handler (service, rules, repository, events)',
    matches: (f) => /\/src\/(subscriptions|lib|request-context|events|bulk|webhooks|schedules|db)\//.test(f.url),
  },
  {
    stage: 'request body (koa-bodyparser)',
    matches: (f) => /node_modules\/(koa-bodyparser|co-body|raw-body|inflation)\/|\/src\/http\/body\.middleware\.[jt]s/.test(f.url),
  },
  { stage: 'openapi-backend (request set-up, lodash)', matches: (f) => /node_modules\/(openapi-backend|lodash)\//.test(f.url) },
  {
    stage: 'Koa and our middleware (context, chain, headers)',
    matches: (f) =>
      /node_modules\/(koa|koa-compose|@koa|delegates|cookies|accepts|type-is|content-type|statuses|http-errors|vary|mime-types|negotiator|only|encodeurl|escape-html|fresh|on-finished|destroy|depd)\/|\/src\/http\//.test(
        f.url,
      ),
  },
  {
    stage: 'HTTP parsing and writing (node:http)',
    matches: (f) => /^node:_http_|^node:http$/.test(f.url) || f.functionName === 'parserOnHeadersComplete',
  },
  { stage: 'V8 and native (program)', matches: (f) => f.functionName === '(program)' },
];
const OTHER = 'other (sockets, timers, tsx, unattributed)';
/** Frames passed through: node's plumbing (every node: module but node:http's own), attributed to whoever called it. */
const PLUMBING = /^node:(?!_http_|http$)/;

export function stagesOf(file: string, window?: Window): { totalMs: number; byStage: Map<string, number> } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOfNode = new Map<number, string | null>();
  const stageOf = (id: number): string | null => {
    const known = stageOfNode.get(id);
    if (known !== undefined) return known;
    const { callFrame } = byId.get(id)!;
    let stage: string | null;
    if (callFrame.functionName === '(idle)') stage = null;
    else {
      const own = STAGES.find((s) => s.matches(callFrame))?.stage;
      const plumbing = callFrame.url === '' || PLUMBING.test(callFrame.url);
      const up = parent.get(id);
      stage =
        own ??
        (plumbing && up !== undefined
          ? stageOf(up)
          : up === undefined
            ? OTHER
            : (STAGES.find((s) => s.matches(callFrame))?.stage ?? OTHER));
    }
    stageOfNode.set(id, stage);
    return stage;
  };
  const byStage = new Map<string, number>();
  let totalMs = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.from || at > window.to)) return;
    const stage = stageOf(id);
    if (stage === null) return;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    totalMs += ms;
    byStage.set(stage, (byStage.get(stage) ?? 0) + ms);
  });
  return { totalMs, byStage };
}

export function printStages(file: string, requests: number, window?: Window): void {
  const { totalMs, byStage } = stagesOf(file, window);
  console.log(
    `CPU of the service's process: ${(totalMs / 1000).toFixed(2)} s for ${requests} requests, ${((totalMs * 1000) / requests).toFixed(0)} µs per request`,
  );
  console.log('| stage | share | µs per request |');
  console.log('|---|--:|--:|');
  const rows = [...STAGES.map((s) => s.stage), OTHER].map((stage) => [stage, byStage.get(stage) ?? 0] as const);
  for (const [stage, ms] of rows)
    console.log(`| ${stage} | ${((100 * ms) / totalMs).toFixed(1)}% | ${((ms * 1000) / requests).toFixed(0)} |`);
}

// `npx tsx scripts/profile/stages.ts <file.cpuprofile> <requests>`: the table of a profile taken before.
// `… <file> <requests> <from> <to>`: only the load's window (the marks the runner printed).
if (process.argv[1]?.endsWith('stages.ts') && process.argv[2]) {
  const [from, to] = [process.argv[4], process.argv[5]].map(Number);
  printStages(process.argv[2], Number(process.argv[3] ?? 1), from && to ? { from, to } : undefined);
}
