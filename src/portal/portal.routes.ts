/**
 * The customer's pages (docs/api.md "Customer portal"): `GET /portal/{token}`, and the form posts
 * `/portal/{token}/pause` and `/portal/{token}/resume`, which answer 303 back to the page, done or
 * refused, so that reloading the page never posts again. They
 * are for browsers, not API clients, so they sit outside the spec like the docs (src/http/): no
 * API key, HTML answers, form-encoded bodies.
 *
 * Every request, whatever its token, is rate-limited by client address, hashed, rate-limited by
 * that hash (per link), and looked up once: an unknown, expired, revoked or malformed token gets
 * the one static 404 page after the same work. Every answer carries the headers below.
 */
import type { Context, Middleware } from 'koa';
import type { Logger } from '../logger.js';
import { SubscriptionNotFoundError } from '../subscriptions/subscriptions.errors.js';
import { csrfMatches, type ActionOutcome, type Notice, type PortalActions } from './portal.actions.js';
import { REFUSALS, type Refusal } from './portal.rules.js';
import { tokenHashOf, type PortalLinksService } from './portal-links.service.js';
import type { StoredPortalLink } from './portal-links.repository.js';
import { messagePage, NOT_FOUND_PAGE, subscriptionPage } from './portal.page.js';
import { isPortalPath, PORTAL_PREFIX, redactedPath, STYLESHEET_PATH } from './portal-paths.js';
import { PORTAL_CSS } from './portal.style.js';
import { FormRefused } from './portal.errors.js';

const HEADERS: Readonly<Record<string, string>> = Object.freeze({
  // No script at all (default-src 'none'), the one stylesheet from here, forms only to here, never framed.
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  // The token is in the URL: no Referer may carry it elsewhere.
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
});

/** A form's whole body: two short fields fit many times over. */
const FORM_LIMIT_BYTES = 1024;
const NOTICE_COOKIE = 'portal_notice';
const NOTICES: readonly Notice[] = ['paused', 'resumed'];
/** A refusal's cookie value: its name only, put in words when the page is shown, so that no text a browser sends is shown. */
const REFUSED = 'refused-';

/** A token bucket per key (src/http/rate-limit.ts): takes one token, or answers false with Retry-After set. */
export interface Limit {
  take(key: string, ctx: Context): boolean;
}

export interface PortalLimits {
  /** Requests per client address (any token). */
  readonly byAddress: Limit;
  /** Requests per token hash: per link for a working one. */
  readonly byLink: Limit;
}

export interface PortalRoutesDependencies {
  readonly links: PortalLinksService;
  readonly actions: PortalActions;
  readonly limits: PortalLimits;
  readonly log: Logger;
}

function answer(ctx: Context, status: number, html: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}

function tooMany(ctx: Context): void {
  answer(ctx, 429, messagePage('Too many requests', 'Please wait a minute, then try again.'));
}

/** The form's fields, read up to FORM_LIMIT_BYTES. */
async function formOf(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) throw new FormRefused(415, 'The form was not sent as a form.');
  if (Number(ctx.get('content-length') || 0) > FORM_LIMIT_BYTES) throw new FormRefused(413, 'The form was too large.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_LIMIT_BYTES) throw new FormRefused(413, 'The form was too large.');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function daysOf(form: URLSearchParams): number | undefined {
  const raw = form.get('days') ?? '';
  return /^\d{1,4}$/.test(raw) ? Number(raw) : undefined;
}

/** The page's path, its token, and what follows it (`pause`, `resume`, or more). */
function partsOf(path: string): { readonly token: string; readonly rest: readonly string[] } {
  const [token = '', ...rest] = path.slice(PORTAL_PREFIX.length).split('/');
  return { token, rest };
}

export function portalMiddleware(deps: PortalRoutesDependencies): Middleware {
  const { log } = deps;
  return async (ctx, next) => {
    if (!isPortalPath(ctx.path)) {
      await next();
      return;
    }
    ctx.set(HEADERS);
    try {
      await serve(ctx, deps);
    } catch (error) {
      if (error instanceof FormRefused) return answer(ctx, error.status, messagePage('Nothing was changed', error.reason));
      // A working link to a subscription that is gone (a test mode's fixtures removed): a link that does not work.
      if (error instanceof SubscriptionNotFoundError) return answer(ctx, 404, NOT_FOUND_PAGE);
      log.error({ err: error, route: redactedPath(ctx.path) }, 'portal request failed');
      answer(ctx, 500, messagePage('Something went wrong', 'Nothing was changed. Please try again in a few minutes.'));
    }
  };
}

async function serve(ctx: Context, deps: PortalRoutesDependencies): Promise<void> {
  const read = ctx.method === 'GET' || ctx.method === 'HEAD';
  if (ctx.path === STYLESHEET_PATH && read) {
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = PORTAL_CSS;
    return;
  }
  if (!deps.limits.byAddress.take(ctx.ip, ctx)) return tooMany(ctx);
  const { token, rest } = partsOf(ctx.path);
  const hash = tokenHashOf(token);
  if (!deps.limits.byLink.take(hash, ctx)) return tooMany(ctx);
  const link = await deps.links.resolve(hash);
  if (!link) return answer(ctx, 404, NOT_FOUND_PAGE);
  if (rest.length === 0 && read) return showPage(ctx, deps, link, token);
  const action = rest.length === 1 && ctx.method === 'POST' ? rest[0] : undefined;
  if (action !== 'pause' && action !== 'resume') return answer(ctx, 404, NOT_FOUND_PAGE);
  return post(ctx, deps, link, token, action);
}

/** A form's post: 303 back to the page, which says what it did or why it changed nothing (post, redirect, get). */
async function post(ctx: Context, deps: PortalRoutesDependencies, link: StoredPortalLink, token: string, action: 'pause' | 'resume') {
  const form = await formOf(ctx);
  const outcome: ActionOutcome = !csrfMatches(link, form.get('csrf') ?? undefined)
    ? { refused: 'form' }
    : action === 'pause'
      ? await deps.actions.pause(link, daysOf(form))
      : await deps.actions.resume(link);
  const said = 'refused' in outcome ? `${REFUSED}${outcome.refused}` : outcome.done;
  ctx.cookies.set(NOTICE_COOKIE, said, cookieOptions(ctx, token, 60_000));
  ctx.status = 303;
  ctx.redirect(`${PORTAL_PREFIX}${token}`);
}

async function showPage(ctx: Context, deps: PortalRoutesDependencies, link: StoredPortalLink, token: string): Promise<void> {
  const sent = ctx.cookies.get(NOTICE_COOKIE);
  const notice = NOTICES.find((n) => n === sent);
  const refusal = REFUSALS.find((r: Refusal) => `${REFUSED}${r}` === sent);
  // Shown once: what the post that led here did, not on every later visit.
  if (sent !== undefined) ctx.cookies.set(NOTICE_COOKIE, '', cookieOptions(ctx, token, 0));
  const view = await deps.actions.view(link, refusal);
  answer(ctx, 200, subscriptionPage(view, `${PORTAL_PREFIX}${token}`, notice));
}

/** The confirmation's cookie: this page's only, unreadable by script, never sent cross-site. */
function cookieOptions(ctx: Context, token: string, maxAge: number) {
  return { path: `${PORTAL_PREFIX}${token}`, httpOnly: true, sameSite: 'strict' as const, secure: ctx.secure, maxAge, overwrite: true };
}
