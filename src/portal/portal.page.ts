/**
 * The portal's HTML, rendered on the server: no framework and no script, so it works with
 * JavaScript off. Everything the merchant controls (its name, the plan) and every reason shown is
 * escaped. One stylesheet (portal.style.ts) from this service; nothing from anywhere else.
 */
import { STYLESHEET_PATH } from './portal-paths.js';
import type { Notice, PageView } from './portal.actions.js';

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function document(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

const NOTICES: Readonly<Record<Notice, string>> = {
  paused: 'Done: your subscription is paused.',
  resumed: 'Done: your subscription is active again.',
};

function pauseForm(action: string, view: PageView): string {
  if (!view.pauseMenu) return '';
  if (view.pauseBlocked !== undefined) return `<p id="pause-blocked">Pausing is not available now. ${escapeHtml(view.pauseBlocked)}</p>`;
  if (view.pauseMenu.length === 0) return '<p>Pausing is not available for this subscription.</p>';
  const buttons = view.pauseMenu
    .map(({ days, until }) => `<button name="days" value="${days}">Pause for ${days} days <span>until ${escapeHtml(until)}</span></button>`)
    .join('\n');
  return `<form method="post" action="${action}/pause">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<fieldset>
<legend>Pause your subscription</legend>
${buttons}
</fieldset>
</form>`;
}

function resumeForm(action: string, view: PageView): string {
  if (!view.resumable) return '';
  return `<form method="post" action="${action}/resume">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<button>Resume now</button>
</form>`;
}

/**
 * The page of a working link: the merchant, the plan and its state, the forms the link and the
 * state allow. `action`: the page's own path (`/portal/{token}`), which the forms post below.
 * `notice`: the confirmation of the post that led here; a refusal comes in the view.
 */
export function subscriptionPage(view: PageView, action: string, notice?: Notice): string {
  const name = escapeHtml(view.merchantName);
  const banner = view.testMode ? '<p class="test-mode" role="note">Test mode: this page changes test data only.</p>\n' : '';
  const said =
    view.refusal !== undefined
      ? `<p class="refusal" role="alert">${escapeHtml(view.refusal)}</p>\n`
      : notice !== undefined
        ? `<p class="notice" role="status">${escapeHtml(NOTICES[notice])}</p>\n`
        : '';
  const ended = view.cancelled ? '<p>This subscription has ended, so it cannot be changed.</p>\n' : '';
  return document(
    `Your subscription with ${name}`,
    `${banner}<h1>Your subscription with ${name}</h1>
${said}<dl>
<dt>Plan</dt><dd>${escapeHtml(view.plan)}</dd>
<dt>State</dt><dd id="state">${escapeHtml(view.state)}</dd>
${view.reason === undefined ? '' : `<dt>Reason</dt><dd>${escapeHtml(view.reason)}</dd>\n`}</dl>
${ended}${pauseForm(action, view)}${resumeForm(action, view)}`,
  );
}

/** Every unknown, expired, revoked or malformed link gets exactly this page: it tells none from another. */
export const NOT_FOUND_PAGE = document(
  'Link not found',
  `<h1>This link does not work</h1>
<p>It may have expired or been replaced. Ask for a new link where you got this one.</p>`,
);

/** A page with one message: a refused or failed request that no link's page can show. */
export function messagePage(title: string, text: string): string {
  return document(escapeHtml(title), `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(text)}</p>`);
}
