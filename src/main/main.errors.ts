/** Why a command of the CLI, or a process's start, stops before doing anything: each prints one line. */

/** A check before any slow step failed; the message names the variable to change. */
export class PreflightError extends Error {
  override name = 'PreflightError';
}

/** A command line the CLI does not understand: it prints its usage. */
export class UsageError extends Error {}
