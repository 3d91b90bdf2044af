/**
 * Live and test mode (docs/partners.md "Test mode"): a merchant's test mode is a tenant of its own,
 * with an id derived from the live merchant's id. Every store scopes by that id, so test data is
 * kept from live data exactly as merchants are kept from each other, and whether an object is live
 * is a function of the id that owns it alone.
 *
 * A test mode's id is a UUID of version 8 (RFC 9562's "custom" version) whose bits are a hash of
 * the live id; live merchants get random (version 4) UUIDs, so the version digit tells them apart.
 */
import { createHash } from 'node:crypto';

const TEST_VERSION = '8';

/** The id of the merchant's test mode: the same for every process, and never a live merchant's. */
export function testModeIdOf(liveMerchantId: string): string {
  const bytes = createHash('sha256').update(`test-mode:${liveMerchantId.toLowerCase()}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Whether data owned by this merchant id (a live merchant's or a test mode's) is live. */
export function livemodeOf(merchantId: string): boolean {
  return merchantId.charAt(14) !== TEST_VERSION;
}
