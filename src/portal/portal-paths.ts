/**
 * The portal's paths as logs, traces and metrics may name them: the token is a credential, so it
 * never leaves the request: whoever reads a log line must not be able to act for the subscriber.
 * `/portal/q2Zl…/pause` is written `/portal/:token/pause`.
 */
export const PORTAL_PREFIX = '/portal/';
export const STYLESHEET_PATH = '/portal/style.css';

const ACTIONS = new Set(['pause', 'resume']);

export function isPortalPath(path: string): boolean {
  return path.startsWith(PORTAL_PREFIX) || path === '/portal';
}

/** The path with its token replaced; any other path as it is. */
export function redactedPath(path: string): string {
  if (!path.startsWith(PORTAL_PREFIX) || path === STYLESHEET_PATH) return path;
  const [, action, ...more] = path.slice(PORTAL_PREFIX.length).split('/');
  if (action === undefined) return '/portal/:token';
  return more.length === 0 && ACTIONS.has(action) ? `/portal/:token/${action}` : '/portal/:token/…';
}
