/** Why a process of the fleet refuses to start. */

/** A second long-running process on a database that takes one: the message is the one line the CLI prints. */
export class SharedDatabaseError extends Error {
  override name = 'SharedDatabaseError';
}
