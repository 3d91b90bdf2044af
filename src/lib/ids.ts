/** Ids that sort by creation time. */
import { hash, randomBytes } from 'node:crypto';

function version7(bytes: Buffer, now: number): string {
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A UUID version 7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Ids made later
 * sort after earlier ones, so a list "newest first" is a walk down the `_id` index, and a cursor
 * is just an id.
 */
export function uuidv7(now = Date.now()): string {
  return version7(randomBytes(16), now);
}

/**
 * A UUIDv7 whose "random" bits are a hash of `name`: the same name and time give the same id.
 * With a `sequence` (0 to 4095), its 12 bits right after the milliseconds are the sequence
 * (RFC 9562's sub-millisecond counter), so ids of the same millisecond sort by it.
 */
export function uuidv7Named(name: string, now: number, sequence?: number): string {
  const bytes = hash('sha256', name, 'buffer').subarray(0, 16);
  if (sequence !== undefined) {
    bytes[6] = (sequence >> 8) & 0x0f;
    bytes[7] = sequence & 0xff;
  }
  return version7(bytes, now);
}

/** A UUID version 5 (RFC 9562): the SHA-1 of `namespace` and `name`, so the same name under the same namespace gives the same id. */
export function uuidv5(name: string, namespace: string): string {
  const bytes = hash(
    'sha1',
    Buffer.concat([Buffer.from(namespace.replaceAll('-', ''), 'hex'), Buffer.from(name, 'utf8')]),
    'buffer',
  ).subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
