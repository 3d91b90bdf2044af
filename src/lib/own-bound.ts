/**
 * Requests that keep a bound of their own on how slowly their body arrives, in place of the
 * server's request timeout, which a large upload streamed at a steady pace may outlast (an
 * import's file: src/imports/imports.upload.ts bounds the time between its bytes). Marked on the
 * connection, which is what node:http's timeout names when it falls due.
 */
const bounded = new WeakSet<object>();

/** The request under way on `socket` bounds itself: the server's request timeout passes it over. */
export function boundsItself(socket: object): void {
  bounded.add(socket);
}

export function isBoundedByItself(socket: object): boolean {
  return bounded.has(socket);
}
