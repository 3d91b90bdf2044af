/**
 * Timestamps with microseconds (docs/design.md §5): ISO 8601 UTC with exactly six fractional digits.
 * They are stored as these fixed-width strings, which sort like the instants they name and
 * round-trip exactly (a BSON Date keeps only milliseconds).
 */
let lastMicros = 0n;
const hrtimeAtStart = process.hrtime.bigint();
const epochMicrosAtStart = BigInt(Date.now()) * 1000n;

/** Microseconds since the epoch, strictly increasing within this process. */
function epochMicros(): bigint {
  const elapsedMicros = (process.hrtime.bigint() - hrtimeAtStart) / 1000n;
  const wallMicros = BigInt(Date.now()) * 1000n;
  // hrtime gives sub-millisecond precision; the wall clock keeps it honest over long runs.
  let micros = epochMicrosAtStart + elapsedMicros;
  if (micros / 1000n !== wallMicros / 1000n) micros = wallMicros + (micros % 1000n);
  if (micros <= lastMicros) micros = lastMicros + 1n;
  lastMicros = micros;
  return micros;
}

/** The last second formatted, and its text: most timestamps fall in the same second as the one before (Date's toISOString is most of the cost). */
let lastSecond = Number.NaN;
let lastSecondText = '';

/** The first and last instants a timestamp can name: the pattern's four-digit years, 0000 to 9999, in UTC. */
export const EARLIEST_TIMESTAMP_MICROS = -62_167_219_200_000_000n;
export const LATEST_TIMESTAMP_MICROS = 253_402_300_799_999_999n;
export const TIMESTAMP_RANGE = '0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z';

export function inTimestampRange(micros: bigint): boolean {
  return micros >= EARLIEST_TIMESTAMP_MICROS && micros <= LATEST_TIMESTAMP_MICROS;
}

/** The instant as a timestamp; one the pattern cannot write (outside years 0000-9999) is a bug of the caller, refused. */
export function formatTimestamp(micros: bigint): string {
  if (!inTimestampRange(micros)) throw new RangeError(`${micros} µs since the epoch is outside ${TIMESTAMP_RANGE}: no timestamp names it`);
  // Floored, not truncated: before 1970 (a test fixture's createdAt may be) the remainder is negative.
  const fraction = ((micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
  const second = Number((micros - fraction) / 1_000_000n);
  if (second !== lastSecond) {
    lastSecondText = new Date(second * 1000).toISOString().slice(0, 19);
    lastSecond = second;
  }
  return `${lastSecondText}.${String(fraction).padStart(6, '0')}Z`;
}

/** Now, in microseconds since the epoch (for comparisons with parsed times). */
export function nowMicros(): bigint {
  return epochMicros();
}

export function nowTimestamp(): string {
  return formatTimestamp(epochMicros());
}

/**
 * The time of one request's data, taken once per request: the real time, read at each use so that
 * the stamps of successive writes stay strictly increasing, or a simulated clock's time.
 */
export interface Clock {
  /** Now, as a stored timestamp. */
  timestamp(): string;
  /** Now, in microseconds since the epoch. */
  micros(): bigint;
  /** Set on a simulated clock: a refusal of a time names that clock, whose now is not the caller's. */
  readonly test?: true;
}

export const REAL_CLOCK: Clock = { timestamp: nowTimestamp, micros: nowMicros };

export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The timestamp `ms` milliseconds ago, in the same format (for comparisons with stored timestamps). */
export function timestampBefore(ms: number): string {
  return formatTimestamp(BigInt(Date.now() - ms) * 1000n);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):?(\d{2})?)$/;

/** Microseconds since the epoch of an RFC 3339 date-time (fractions past microseconds dropped); undefined if it is not one. */
export function parseRfc3339(text: string): bigint | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, fraction = '', zulu, sign, oh = '0', om = '0'] = m;
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s));
  const offsetMinutes = zulu ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  const millis = date.getTime() - offsetMinutes * 60_000;
  if (Number.isNaN(millis)) return undefined;
  return BigInt(millis) * 1000n + BigInt(fraction.slice(0, 6).padEnd(6, '0'));
}
