/**
 * A pause request's `pauseAt`, `resumeAt` and `reason` (docs/design.md §9): only the rules a schema
 * cannot state (in the future, at most 3 years ahead, in order), and times normalised to the
 * service's microsecond UTC timestamps (docs/design.md §5). Their form (an RFC 3339 date-time, a
 * reason of 1 to 500 characters) is the spec's, validated before a handler runs.
 */
import { InvalidRequestError } from '../errors.js';
import { InvalidScheduleError } from './subscriptions.errors.js';
import type { PauseSchedule } from '../pause-policy/pause-policy.rules.js';
import { formatTimestamp, inTimestampRange, parseRfc3339, TIMESTAMP_RANGE, type Clock } from '../lib/clock.js';

/** The body fields of a pause that schedule it: a request without any of them answers as before. */
export const SCHEDULE_FIELDS = ['pauseAt', 'resumeAt', 'reason'] as const;

/** The schedule fields of a pause, as the spec types them (times normalised once checked), which the pause policy rules too. */
export type ScheduleRequest = PauseSchedule;

const MAX_YEARS_AHEAD = 3;
/**
 * The instant a request's date-time names, in microseconds: 400 0040 naming the field at `path`
 * when it is not one, or when its UTC form leaves the years a timestamp can write (docs/design.md
 * §5): `9999-12-31T23:59:59-23:59` is in the year 10000.
 */
export function requestedInstant(path: string, text: string): bigint {
  const micros = parseRfc3339(text);
  if (micros === undefined)
    throw new InvalidRequestError('The request does not match the API contract.', [{ path, message: 'must match format "date-time"' }]);
  if (!inTimestampRange(micros)) {
    const message = `must be from ${TIMESTAMP_RANGE} in UTC`;
    throw new InvalidRequestError(`${path.slice(path.lastIndexOf('/') + 1)} ${message}; ${text} is not.`, [{ path, message }]);
  }
  return micros;
}

/** A request's date-time as a stored timestamp (see requestedInstant). */
export function requestedTimestamp(path: string, text: string): string {
  return formatTimestamp(requestedInstant(path, text));
}

function futureTime(field: 'pauseAt' | 'resumeAt', raw: string | undefined, now: Pick<Clock, 'micros' | 'test'>): bigint | undefined {
  if (raw === undefined) return undefined;
  const micros = requestedInstant(`/${field}`, raw);
  const nowMicros = now.micros();
  // A test clock may stand far from the caller's own: the refusal says which now it was checked against.
  if (micros <= nowMicros)
    throw new InvalidScheduleError(
      field,
      now.test ? `must be after the test clock, now ${formatTimestamp(nowMicros)}` : 'must be in the future',
    );
  const limit = new Date(Number(nowMicros / 1000n));
  limit.setUTCFullYear(limit.getUTCFullYear() + MAX_YEARS_AHEAD);
  if (micros > BigInt(limit.getTime()) * 1000n) throw new InvalidScheduleError(field, `must be at most ${MAX_YEARS_AHEAD} years ahead`);
  return micros;
}

/** The schedule a pause body asks for, checked against the merchant's clock, or undefined when it has none of the fields. */
export function scheduleRequestOf(body: ScheduleRequest, now: Pick<Clock, 'micros' | 'test'>): ScheduleRequest | undefined {
  if (!SCHEDULE_FIELDS.some((field) => body[field] !== undefined)) return undefined;
  const pauseAt = futureTime('pauseAt', body.pauseAt, now);
  const resumeAt = futureTime('resumeAt', body.resumeAt, now);
  if (pauseAt !== undefined && resumeAt !== undefined && pauseAt >= resumeAt)
    throw new InvalidScheduleError('pauseAt', 'must be before resumeAt');
  const { reason } = body;
  return {
    ...(pauseAt !== undefined ? { pauseAt: formatTimestamp(pauseAt) } : {}),
    ...(resumeAt !== undefined ? { resumeAt: formatTimestamp(resumeAt) } : {}),
    ...(reason !== undefined ? { reason } : {}),
  };
}
