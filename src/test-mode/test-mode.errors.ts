/** What the test helpers refuse (mapped to problems in src/http/problem.middleware.ts). */
import { DomainError } from '../errors.js';

/** A live key used on a test helper: 403. */
export class TestModeOnlyError extends DomainError {}

/** Another advance moved the test clock first: 409. */
export class TestClockMovedError extends DomainError {}

/** Subsvc-Test-Outcome sent with a live key: 400, nothing done. */
export class TestOutcomeWithLiveKeyError extends DomainError {}

/** Subsvc-Test-Outcome names no scenario, or a count it cannot take: 400, nothing done. */
export class InvalidTestOutcomeError extends DomainError {}
