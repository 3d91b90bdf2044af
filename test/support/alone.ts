/**
 * Files that run alone, one after another, after the others: those that time what they check
 * (deadlines, rates, slowness, a load's latency), measure races between processes, or fill the
 * run's database server with tens of thousands of documents. Beside another file, their timing
 * would be the other file's as much as theirs. Every other file works in a database of its own and
 * shares nothing else, so those run side by side: among them the files that write 100,000
 * documents on a server of their own (test/support/own-server.ts), which leave the run's server free.
 */
export const ALONE = [
  'test/bulk/bulk.test.ts',
  'test/bulk/bulk-export.test.ts',
  'test/bulk/bulk-shared.test.ts',
  'test/bulk/bulk-wake.test.ts',
  'test/bulk/workers.test.ts',
  'test/db/db-faults-slow.test.ts',
  'test/db/engine-equivalence.test.ts',
  'test/fleet/fleet.test.ts',
  'test/http/client-errors.test.ts',
  'test/http/http-timeouts.test.ts',
  'test/http/rate-limit.test.ts',
  'test/schedules/schedules-workers.test.ts',
  'test/subscriptions/cross-process-races.test.ts',
];

/**
 * Files that keep a core busy but time nothing (they drive Chromium, npm, a Maven or Go build, or a
 * dozen CLI processes compiled from source): two at a time, after the files that run alone, with
 * nothing else beside them, so that neither waits for a core the other left idle. Beside the
 * side-by-side files they would slow those as much as two more of them.
 */
export const BUSY_IN_PAIRS = [
  'test/cli/cli.test.ts',
  'test/cli/cli-seed.test.ts',
  'test/docs/clients-docs.test.ts',
  'test/docs/docs-browser.test.ts',
  'test/main/first-run.test.ts',
  'test/portal/portal-browser.test.ts',
  'test/scripts/without-dev-dependencies.test.ts',
];

/**
 * Files that mostly wait while using little CPU (the Stripe push faults stop stripe-mock for a
 * minute and wait for a killed worker's lease; the hold placing faults wait for the poll to finish
 * what killed serve processes left; the Kafka tests wait for a stopped broker): `npm test` runs
 * them, WAITING_AT_ONCE at a time, in a vitest process of its own beside the side-by-side files,
 * so that their waiting overlaps the others' work. Each works in a database and with processes of
 * its own, as the side-by-side files do. A Kafka test restarting its broker's JVM beside five busy
 * processes once took a minute: those tests have three.
 */
export const WAITING = [
  'test/billing/push-faults.test.ts',
  'test/billing/push-failure-kill.test.ts',
  'test/holds/hold-place-faults.test.ts',
  'test/event-destinations/kafka-faults.test.ts',
  'test/event-destinations/kafka.test.ts',
];

/** Waiting files at once: the longest three start together, the Kafka files as each of those ends. */
export const WAITING_AT_ONCE = 3;

/**
 * Files that time what they check but mostly wait, with little CPU and few database writes (a
 * schedule's lag set-up waiting for its resumeAt, a serve process outlasting a database outage or a
 * hang through the wire proxy, a shutdown's deadlines): two at a time, after the files that run
 * alone, with nothing else beside them. Beside each other they keep the machine's two cores and the
 * run's database nearly to themselves; one that starts failing for its timing there moves to ALONE.
 */
export const IN_PAIRS = [
  'test/db/db-faults.test.ts',
  'test/main/process-faults.test.ts',
  'test/main/shutdown.test.ts',
  'test/schedules/bench-schedule-lag.test.ts',
];
