/**
 * Portal links and the customer's page (issue 47) through HTTP on the real database: links made,
 * listed and revoked through the API; the page, its forms, its refusals and its headers; the
 * changes it makes, with their events; one 404 page for every token that does not work; rate
 * limits; escaping; test mode and its clock; the token kept out of the logs. Each test has its
 * own merchant and its own client address (the service trusts loopback as a proxy).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, httpOf } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';
import { waitFor } from '../support/wait.js';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: 1, trustedProxies: ['127.0.0.1/32'] });
});
afterAll(async () => {
  await t?.close();
});

const DAY = 24 * 3600_000;
const OFF = { maxPauseDays: null, maxPausesPerYear: null, requireResumeAt: false, cooldownDays: null, allowedPauseDays: null };
const { api } = httpOf(() => t);

let lastAddress = 0;
/** A client address of its own (documentation range), so that no test uses up another's limit. */
const newAddress = () => `2001:db8::${(++lastAddress).toString(16)}`;

interface PageReply {
  readonly status: number;
  readonly headers: Headers;
  readonly html: string;
}

/** A browser's request to a portal path: no API key, a form body when given, redirects not followed. */
async function visit(
  path: string,
  options: { method?: string; form?: Record<string, string>; address?: string; cookie?: string; body?: string; type?: string } = {},
): Promise<PageReply> {
  const headers: Record<string, string> = { 'x-forwarded-for': options.address ?? newAddress() };
  if (options.cookie) headers.cookie = options.cookie;
  let body = options.body;
  if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  if (options.type) headers['content-type'] = options.type;
  const response = await fetch(`${t.baseUrl}${path}`, { method: options.method ?? 'GET', headers, body, redirect: 'manual' });
  return { status: response.status, headers: response.headers, html: await response.text() };
}

async function linkFor(apiKey: string, subscriptionId: string, body?: unknown) {
  const made = await api(apiKey, 'POST', `/v2/subscriptions/${subscriptionId}/portal-links`, body);
  expect(made.status).toBe(201);
  const token = (made.body.url as string).split('/portal/')[1]!;
  return { ...made.body, token, path: `/portal/${token}` };
}

const csrfOf = (html: string) => /name="csrf" value="([^"]*)"/.exec(html)?.[1];
const storedCsrf = async (linkId: string) => (await t.db.collection('portalLinks').findOne({ _id: linkId as never }))?.csrf as string;
const stored = (id: string) => t.db.collection('subscriptions').findOne({ _id: id as never });

/** A merchant with one active subscription and a link to it. */
async function customer(body?: unknown, status: 'fulfilled' | 'paused' | 'cancelled' = 'fulfilled') {
  const merchant = await t.merchant();
  const [id] = await t.seed(merchant.merchantId, 1, status);
  const link = await linkFor(merchant.apiKey, id!, body);
  return { ...merchant, id: id!, link, address: newAddress() };
}

/** A refused post as a browser sees it: a 303 to the page, and the page it leads to (with the post's cookie), which says why. */
async function refusedThen(posted: PageReply, path: string, address?: string): Promise<string> {
  expect([posted.status, posted.headers.get('location')]).toEqual([303, path]);
  const cookie = posted.headers.get('set-cookie')?.split(';')[0];
  const page = await visit(path, { address, cookie });
  expect(page.status).toBe(200);
  return page.html;
}

/** "14 December", with the year when it is not this one, as the page writes a date. */
const plainDay = (ms: number) =>
  new Date(ms).toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'long',
    timeZone: 'UTC',
    ...(new Date(ms).getUTCFullYear() === new Date().getUTCFullYear() ? {} : { year: 'numeric' }),
  });

/** Opens the page and posts one of its forms as a browser would, following the 303 with its cookie. */
async function submit(path: string, action: 'pause' | 'resume', fields: Record<string, string>, address: string) {
  const opened = await visit(path, { address });
  const posted = await visit(`${path}/${action}`, { method: 'POST', form: { csrf: csrfOf(opened.html) ?? '', ...fields }, address });
  const cookie = posted.headers.get('set-cookie')?.split(';')[0];
  return { opened, posted, cookie };
}

describe('POST /v2/subscriptions/{id}/portal-links', () => {
  it('answers 201 with an absolute url on the request origin, both actions and a day by default, and keeps only the token hash', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const made = await api(apiKey, 'POST', `/v2/subscriptions/${id}/portal-links`);
    expect(made.status).toBe(201);
    const { url, actions, createdAt, expiresAt, livemode, subscriptionId } = made.body;
    expect(url).toMatch(new RegExp(`^${t.baseUrl}/portal/[A-Za-z0-9_-]{43}$`));
    expect([actions, livemode, subscriptionId]).toEqual([['pause', 'resume'], true, id]);
    expect(Date.parse(expiresAt) - Date.parse(createdAt)).toBe(1440 * 60_000);
    const token = url.split('/portal/')[1];
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    const doc = await t.db.collection('portalLinks').findOne({ _id: made.body.id });
    expect(doc?.tokenHash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(doc)).not.toContain(token);
  });

  it('takes the actions and expiresInMinutes asked, and refuses what the contract does not allow with 400 0040', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const made = await api(apiKey, 'POST', `/v2/subscriptions/${id}/portal-links`, { actions: ['pause'], expiresInMinutes: 10080 });
    expect([made.status, made.body.actions]).toEqual([201, ['pause']]);
    expect(Date.parse(made.body.expiresAt) - Date.parse(made.body.createdAt)).toBe(10080 * 60_000);
    for (const body of [{ expiresInMinutes: 0 }, { expiresInMinutes: 10081 }, { actions: [] }, { actions: ['cancel'] }, { url: 'x' }]) {
      const refused = await api(apiKey, 'POST', `/v2/subscriptions/${id}/portal-links`, body);
      expect([refused.status, refused.body.code]).toEqual([400, '0040']);
    }
  });

  it("answers 404 0020 for an unknown subscription or another merchant's, and 409 0030 for a cancelled one", async () => {
    const mine = await t.merchant();
    const theirs = await t.merchant();
    const [other] = await t.seed(theirs.merchantId, 1);
    const [cancelled] = await t.seed(mine.merchantId, 1, 'cancelled');
    for (const id of [other, '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60', 'not-a-uuid']) {
      const refused = await api(mine.apiKey, 'POST', `/v2/subscriptions/${id}/portal-links`);
      expect([refused.status, refused.body.code]).toEqual([404, '0020']);
    }
    const refused = await api(mine.apiKey, 'POST', `/v2/subscriptions/${cancelled}/portal-links`);
    expect([refused.status, refused.body.code]).toEqual([409, '0030']);
  });

  it('starts the url with PUBLIC_URL when the service has one', async () => {
    const other = await startTestService({ publicUrl: 'https://billing.example.com' });
    try {
      const { merchantId, apiKey } = await other.merchant();
      const [id] = await other.seed(merchantId, 1);
      const made = await call(other.baseUrl, `/v2/subscriptions/${id}/portal-links`, { apiKey });
      expect(made.body.url).toMatch(/^https:\/\/billing\.example\.com\/portal\/[A-Za-z0-9_-]{43}$/);
    } finally {
      await other.close();
    }
  });
});

describe('GET /v2/portal-links and DELETE /v2/portal-links/{id}', () => {
  it("lists the merchant's links oldest first without url, one subscription's with subscriptionId, and never another merchant's", async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [a, b] = await t.seed(merchantId, 2);
    const first = await linkFor(apiKey, a!);
    const second = await linkFor(apiKey, b!, { actions: ['resume'] });
    const third = await linkFor(apiKey, a!);
    await customer();
    const all = await api(apiKey, 'GET', '/v2/portal-links');
    expect(all.body.data.map((l: any) => l.id)).toEqual([first.id, second.id, third.id]);
    expect(JSON.stringify(all.body)).not.toContain('url');
    const ofA = await api(apiKey, 'GET', `/v2/portal-links?subscriptionId=${a}&limit=1`);
    expect([ofA.body.data.map((l: any) => l.id), ofA.body.hasMore]).toEqual([[first.id], true]);
    const next = await api(apiKey, 'GET', `/v2/portal-links?subscriptionId=${a}&limit=1&startingAfter=${ofA.body.nextCursor}`);
    expect([next.body.data.map((l: any) => l.id), next.body.hasMore]).toEqual([[third.id], false]);
  });

  it("revokes with 204: the page answers 404 at once and the list drops it; an unknown or another merchant's link answers 404 0027", async () => {
    const { apiKey, link, address } = await customer();
    const other = await t.merchant();
    expect((await visit(link.path, { address })).status).toBe(200);
    const theirs = await api(other.apiKey, 'DELETE', `/v2/portal-links/${link.id}`);
    expect([theirs.status, theirs.body.code]).toEqual([404, '0027']);
    expect((await api(apiKey, 'DELETE', `/v2/portal-links/${link.id}`)).status).toBe(204);
    expect((await visit(link.path, { address })).status).toBe(404);
    expect((await api(apiKey, 'GET', '/v2/portal-links')).body.data).toEqual([]);
    for (const id of [link.id, '01937a1c-7d4a-7e6f-8a1b-2c3d4e5f6a93', 'nope']) {
      const again = await api(apiKey, 'DELETE', `/v2/portal-links/${id}`);
      expect([again.status, again.body.code]).toEqual([404, '0027']);
    }
  });

  it('revokes at once for every process: a second service on the same database answers 404 right after', async () => {
    const second = await startTestService({ databaseName: t.db.databaseName, trustedProxies: ['127.0.0.1/32'] });
    try {
      const { apiKey, link, address } = await customer();
      const onSecond = () => fetch(`${second.baseUrl}${link.path}`, { headers: { 'x-forwarded-for': address } });
      expect((await onSecond()).status).toBe(200);
      expect((await api(apiKey, 'DELETE', `/v2/portal-links/${link.id}`)).status).toBe(204);
      expect((await onSecond()).status).toBe(404);
    } finally {
      await second.close();
    }
  });
});

describe('GET /portal/{token}', () => {
  it("shows the merchant's name, the plan and the state, and a pause form with a hidden csrf and one button per default length", async () => {
    const { link, address } = await customer();
    const page = await visit(link.path, { address });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.html).toContain('<html lang="en">');
    expect(page.html).toMatch(/Your subscription with merchant [0-9a-f]{8}/);
    expect(page.html).toContain('<dd id="state">Active</dd>');
    expect(page.html).toContain(`<form method="post" action="/portal/${link.token}/pause">`);
    expect(page.html).toMatch(/<input type="hidden" name="csrf" value="[A-Za-z0-9_-]{43}">/);
    expect([...page.html.matchAll(/<button name="days" value="(\d+)">/g)].map((m) => m[1])).toEqual(['7', '14', '30']);
    expect(page.html).not.toContain('/resume"');
    expect(page.html).not.toContain('<script');
  });

  it("offers the policy's allowedPauseDays within maxPauseDays, or the default lengths within maxPauseDays", async () => {
    const allowed = await t.merchant();
    expect(
      (await api(allowed.apiKey, 'PUT', '/v2/pause-policy', { ...OFF, allowedPauseDays: [30, 60, 90], maxPauseDays: 60 })).status,
    ).toBe(200);
    const capped = await t.merchant();
    expect((await api(capped.apiKey, 'PUT', '/v2/pause-policy', { ...OFF, maxPauseDays: 20 })).status).toBe(200);
    for (const [merchant, lengths] of [
      [allowed, ['30', '60']],
      [capped, ['7', '14']],
    ] as const) {
      const [id] = await t.seed(merchant.merchantId, 1);
      const link = await linkFor(merchant.apiKey, id!);
      const page = await visit(link.path);
      expect([...page.html.matchAll(/name="days" value="(\d+)"/g)].map((m) => m[1])).toEqual(lengths);
    }
  });

  it('sends the security headers on every portal answer, the 404, the stylesheet and the refusals included', async () => {
    const { link, address } = await customer();
    const answers = [
      await visit(link.path, { address }),
      await visit('/portal/nothing-here', { address }),
      await visit('/portal/style.css', { address }),
      await visit(`${link.path}/pause`, { method: 'POST', form: { days: '7' }, address }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 404, 200, 303]);
    for (const { headers } of answers) {
      const csp = headers.get('content-security-policy') ?? '';
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("form-action 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("default-src 'none'");
      expect(headers.get('referrer-policy')).toBe('no-referrer');
      expect(headers.get('cache-control')).toBe('no-store');
      expect(headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('keeps the page and its one stylesheet under 20 KB, asking nothing of other hosts', async () => {
    const { link, address } = await customer();
    const page = await visit(link.path, { address });
    const css = await visit('/portal/style.css', { address });
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(Buffer.byteLength(page.html) + Buffer.byteLength(css.html)).toBeLessThan(20 * 1024);
    expect([...page.html.matchAll(/(?:href|src|action)="([^"]*)"/g)].map((m) => m[1]).filter((u) => !u!.startsWith('/'))).toEqual([]);
  });

  // The plan is a UUID in the contract; the display name and the pause reason are the merchant's own text.
  it('escapes markup and script in the display name and the pause reason', async () => {
    const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>'&`;
    const { merchantId, apiKey } = await t.service.auth.createMerchant(`Shop ${evil}`);
    const [id] = await t.seed(merchantId, 1);
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`, { reason: `reason ${evil}` })).status).toBe(200);
    const link = await linkFor(apiKey, id!);
    const page = await visit(link.path);
    expect(page.status).toBe(200);
    expect(page.html).not.toContain('<script');
    expect(page.html).not.toContain('<img');
    const escaped = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&#39;&amp;';
    expect(page.html).toContain(`Shop ${escaped}`);
    expect(page.html).toContain(`reason ${escaped}`);
  });
});

describe('POST /portal/{token}/pause and /resume', () => {
  it('pauses for 14 days: 303 to the page, which shows "Paused until …" and a confirmation once; the event names the link', async () => {
    const { apiKey, id, link, address } = await customer();
    const { posted, cookie } = await submit(link.path, 'pause', { days: '14' }, address);
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toBe(link.path);
    const subscription = (await api(apiKey, 'GET', `/v2/subscriptions/${id}`)).body;
    expect(subscription.status).toBe('paused');
    const until = Date.parse(subscription.schedule.resumeAt);
    expect(Math.abs(until - (Date.now() + 14 * DAY))).toBeLessThan(60_000);
    const day = new Date(until).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', timeZone: 'UTC' });
    const after = await visit(link.path, { address, cookie });
    expect(after.html).toMatch(new RegExp(`<dd id="state">Paused until ${day}( \\d{4})?</dd>`));
    expect(after.html).toContain('Done: your subscription is paused.');
    expect(after.html).toContain(`<form method="post" action="/portal/${link.token}/resume">`);
    expect((await visit(link.path, { address })).html).not.toContain('Done:');
    const events = await waitFor(
      async () => (await api(apiKey, 'GET', `/v2/events?subscriptionId=${id}`)).body.data as any[],
      (e) => e.some((x) => x.type === 'subscription.paused'),
      30_000,
    );
    const paused = events.find((e) => e.type === 'subscription.paused');
    expect(paused.data.cause).toEqual({ kind: 'portal', portalLinkId: link.id });
  });

  it('resumes a paused subscription: 303, then "Active" with a confirmation', async () => {
    const { id, link, address } = await customer(undefined, 'paused');
    const opened = await visit(link.path, { address });
    expect(opened.html).toContain('<dd id="state">Paused</dd>');
    expect(opened.html).not.toContain('name="days"');
    const { posted, cookie } = await submit(link.path, 'resume', {}, address);
    expect([posted.status, posted.headers.get('location')]).toEqual([303, link.path]);
    expect((await stored(id))?.status).toBe('fulfilled');
    const after = await visit(link.path, { address, cookie });
    expect(after.html).toContain('<dd id="state">Active</dd>');
    expect(after.html).toContain('Done: your subscription is active again.');
  });

  it('changes nothing for a missing or wrong csrf, and says the form is out of date after the redirect', async () => {
    const { id, link, address } = await customer();
    const forms: Record<string, string>[] = [{ days: '7' }, { days: '7', csrf: 'x'.repeat(43) }, { days: '7', csrf: '' }];
    for (const form of forms) {
      const refused = await visit(`${link.path}/pause`, { method: 'POST', form, address });
      expect(await refusedThen(refused, link.path, address)).toContain('This form is out of date.');
    }
    expect((await stored(id))?.status).toBe('fulfilled');
  });

  it('refuses an action the link does not allow, saying so after the redirect, and shows no form for it', async () => {
    const pauseOnly = await customer({ actions: ['pause'] }, 'paused');
    expect((await visit(pauseOnly.link.path)).html).not.toContain('/resume"');
    // The page offers no form to take a csrf from: the link's own, as a form of an older page would carry.
    const refused = await visit(`${pauseOnly.link.path}/resume`, { method: 'POST', form: { csrf: await storedCsrf(pauseOnly.link.id) } });
    expect(await refusedThen(refused, pauseOnly.link.path)).toContain('This link does not allow resuming.');
    expect((await stored(pauseOnly.id))?.status).toBe('paused');
    const resumeOnly = await customer({ actions: ['resume'] });
    const page = await visit(resumeOnly.link.path);
    expect(page.html).not.toContain('name="days"');
    const posted = await visit(`${resumeOnly.link.path}/pause`, {
      method: 'POST',
      form: { csrf: await storedCsrf(resumeOnly.link.id), days: '7' },
    });
    expect(await refusedThen(posted, resumeOnly.link.path)).toContain('This link does not allow pausing.');
    expect((await stored(resumeOnly.id))?.status).toBe('fulfilled');
  });

  it('refuses a length outside the menu or one the policy forbids with the rule in plain words after the redirect, changing nothing', async () => {
    const { id, link, address } = await customer();
    for (const days of ['10', '0', 'abc', '']) {
      const refused = await submit(link.path, 'pause', { days }, address);
      expect(await refusedThen(refused.posted, link.path, address)).toContain('Choose a pause of 7, 14 or 30 days.');
    }
    expect((await stored(id))?.status).toBe('fulfilled');
    const cooled = await t.merchant();
    expect((await api(cooled.apiKey, 'PUT', '/v2/pause-policy', { ...OFF, cooldownDays: 30 })).status).toBe(200);
    const [sub] = await t.seed(cooled.merchantId, 1);
    await t.db
      .collection('subscriptions')
      .updateOne({ _id: sub as never }, { $set: { lastResumedAt: new Date(Date.now() - DAY).toISOString().replace('Z', '000Z') } });
    const cooledLink = await linkFor(cooled.apiKey, sub!);
    // The page offers no pause in a cooldown: the post of a page opened before it began.
    const refused = await visit(`${cooledLink.path}/pause`, { method: 'POST', form: { csrf: await storedCsrf(cooledLink.id), days: '7' } });
    expect(await refusedThen(refused, cooledLink.path)).toContain('A new pause can start only 30 days after the last one ended.');
    expect((await stored(sub!))?.status).toBe('fulfilled');
  });

  it('after a refused pause, the redirected page says why once, and reloading it posts nothing', async () => {
    const { merchantId, apiKey } = await t.merchant();
    expect((await api(apiKey, 'PUT', '/v2/pause-policy', { ...OFF, maxPausesPerYear: 1 })).status).toBe(200);
    const [id] = await t.seed(merchantId, 1);
    const link = await linkFor(apiKey, id!);
    const address = newAddress();
    const opened = await visit(link.path, { address });
    // The year's one pause is used up (through the API) while the page stands open.
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`)).status).toBe(200);
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${id}/resume`)).status).toBe(200);

    const posted = await visit(`${link.path}/pause`, { method: 'POST', form: { csrf: csrfOf(opened.html)!, days: '7' }, address });

    const said = await refusedThen(posted, link.path, address);
    expect(said).toContain('<p class="refusal" role="alert">This subscription can be paused at most 1 times in a year');
    // The reload is a GET of the page: it says nothing again and changes nothing.
    const reloaded = await visit(link.path, { address });
    expect(reloaded.html).not.toContain('class="refusal"');
    expect((await stored(id!))?.status).toBe('fulfilled');
  });

  it("offers no pause the policy would refuse: with the year's pauses used up, it says why and from when it may pause again", async () => {
    const { merchantId, apiKey } = await t.merchant();
    expect((await api(apiKey, 'PUT', '/v2/pause-policy', { ...OFF, maxPausesPerYear: 1 })).status).toBe(200);
    const [id] = await t.seed(merchantId, 1);
    const paused = await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`);
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${id}/resume`)).status).toBe(200);
    const link = await linkFor(apiKey, id!);

    const page = await visit(link.path);

    expect(page.html).not.toContain('name="days"');
    expect(page.html).toContain(
      '<p id="pause-blocked">Pausing is not available now. This subscription can be paused at most 1 times in a year, and it has been paused that often already. ' +
        `You can pause it again from ${plainDay(Date.parse(paused.body.modifiedAt) + 365 * DAY)}.</p>`,
    );
  });

  it('offers no pause during a cooldown: it says why and from when it may pause again', async () => {
    const { merchantId, apiKey } = await t.merchant();
    expect((await api(apiKey, 'PUT', '/v2/pause-policy', { ...OFF, cooldownDays: 30 })).status).toBe(200);
    const [id] = await t.seed(merchantId, 1);
    expect((await api(apiKey, 'POST', `/v2/subscriptions/${id}/pause`)).status).toBe(200);
    const resumed = await api(apiKey, 'POST', `/v2/subscriptions/${id}/resume`);
    const link = await linkFor(apiKey, id!);

    const page = await visit(link.path);

    expect(page.html).not.toContain('name="days"');
    expect(page.html).toContain(
      '<p id="pause-blocked">Pausing is not available now. A new pause can start only 30 days after the last one ended. ' +
        `You can pause it again from ${plainDay(Date.parse(resumed.body.modifiedAt) + 30 * DAY)}.</p>`,
    );
  });

  it('says a cancelled subscription cannot be changed, offers no form, and refuses a post saying so after the redirect', async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [id] = await t.seed(merchantId, 1);
    const link = await linkFor(apiKey, id!);
    const address = newAddress();
    const opened = await visit(link.path, { address });
    await t.db.collection('subscriptions').updateOne({ _id: id as never }, { $set: { status: 'cancelled' } });
    const page = await visit(link.path, { address });
    expect(page.html).toContain('<dd id="state">Cancelled</dd>');
    expect(page.html).toContain('cannot be changed');
    expect(page.html).not.toContain('<form');
    const posted = await visit(`${link.path}/pause`, { method: 'POST', form: { csrf: csrfOf(opened.html)!, days: '7' }, address });
    expect(await refusedThen(posted, link.path, address)).toContain('cannot be changed');
  });

  it('refuses a body that is not a form (415) or over 1 KiB (413), changing nothing', async () => {
    const { id, link, address } = await customer();
    const csrf = csrfOf((await visit(link.path, { address })).html)!;
    const json = await visit(`${link.path}/pause`, {
      method: 'POST',
      body: JSON.stringify({ csrf, days: '7' }),
      type: 'application/json',
      address,
    });
    expect(json.status).toBe(415);
    const big = await visit(`${link.path}/pause`, { method: 'POST', form: { csrf, days: '7', pad: 'x'.repeat(2000) }, address });
    expect(big.status).toBe(413);
    expect((await stored(id))?.status).toBe('fulfilled');
  });

  it('changes a subscription once however many posts arrive at once: one paused event, one schedule, round after round', async () => {
    for (let round = 0; round < 3; round++) {
      const { apiKey, id, link } = await customer();
      const csrf = csrfOf((await visit(link.path)).html)!;
      const posts = await Promise.all(
        Array.from({ length: 25 }, () => visit(`${link.path}/pause`, { method: 'POST', form: { csrf, days: '14' } })),
      );
      expect(new Set(posts.map((p) => p.status))).toEqual(new Set([303]));
      const events = await waitFor(
        async () => (await api(apiKey, 'GET', `/v2/events?subscriptionId=${id}`)).body.data as any[],
        (e) => e.length >= 2,
        30_000,
      );
      await new Promise((r) => setTimeout(r, 300));
      const settled = (await api(apiKey, 'GET', `/v2/events?subscriptionId=${id}`)).body.data as any[];
      expect(settled.map((e) => e.type).sort()).toEqual(['subscription.paused', 'subscription.resume_scheduled']);
      expect(events.every((e) => e.data.cause.kind === 'portal')).toBe(true);
    }
  }, 60_000);
});

describe('tokens that do not work', () => {
  it('answers 404 with the same page byte for byte for unknown, expired, revoked and malformed tokens', async () => {
    const expired = await customer();
    await t.db.collection('portalLinks').updateOne({ _id: expired.link.id }, { $set: { expiresAt: '2020-01-01T00:00:00.000000Z' } });
    const revoked = await customer();
    expect((await api(revoked.apiKey, 'DELETE', `/v2/portal-links/${revoked.link.id}`)).status).toBe(204);
    const paths = [
      `/portal/${Buffer.alloc(32, 7).toString('base64url')}`,
      expired.link.path,
      revoked.link.path,
      '/portal/%3Cscript%3E',
      '/portal/short',
      `/portal/${'A'.repeat(500)}`,
      `${expired.link.path}/pause`,
    ];
    const answers = await Promise.all(paths.map((path, i) => visit(path, i === 6 ? { method: 'POST', form: { days: '7' } } : {})));
    expect(answers.map((a) => a.status)).toEqual(paths.map(() => 404));
    expect(new Set(answers.map((a) => a.html)).size).toBe(1);
    expect(answers[0]!.html).toContain('This link does not work');
    expect((await stored(expired.id))?.status).toBe('fulfilled');
  });

  it('answers the same 404 for a link whose subscription is gone (test fixtures removed)', async () => {
    const { testApiKey } = await t.merchant();
    const made = await api(testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count: 1 });
    const link = await linkFor(testApiKey, made.body.data[0].id);
    expect((await visit(link.path)).status).toBe(200);
    expect((await api(testApiKey, 'DELETE', '/v2/test-helpers/subscriptions')).status).toBe(200);
    const gone = await visit(link.path);
    expect(gone.status).toBe(404);
    expect(gone.html).toBe((await visit('/portal/unknown')).html);
  });

  it('limits requests per link (whatever the address) and per address (whatever the token) with a 429 page', async () => {
    const { link } = await customer();
    const perLink = [];
    for (let i = 0; i < 32; i++) perLink.push((await visit(link.path)).status);
    expect(perLink.slice(0, 30)).toEqual(Array(30).fill(200));
    expect(perLink.at(-1)).toBe(429);
    const address = newAddress();
    const perAddress = [];
    for (let i = 0; i < 62; i++) perAddress.push(await visit(`/portal/unknown-${i}`, { address }));
    expect(perAddress.slice(0, 60).map((a) => a.status)).toEqual(Array(60).fill(404));
    const limited = perAddress.at(-1)!;
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('never writes the token into the logs: the route is logged as /portal/:token', async () => {
    const { link, address } = await customer();
    await submit(link.path, 'pause', { days: '7' }, address);
    const lines = JSON.stringify(t.logLines);
    expect(lines).not.toContain(link.token);
    expect(t.logLines.some((l) => l.path === '/portal/:token/pause')).toBe(true);
    expect(t.logLines.some((l) => l.path === '/portal/:token')).toBe(true);
  });
});

describe('test mode', () => {
  it('acts on test data, shows a test mode banner, and dates the menu and the pause by the test clock', async () => {
    const { merchantId, testApiKey } = await t.merchant();
    const made = await api(testApiKey, 'POST', '/v2/test-helpers/subscriptions', { count: 1 });
    expect(made.status).toBe(201);
    const id: string = made.body.data[0].id;
    const clockTo = new Date(Date.now() + 400 * DAY);
    clockTo.setUTCHours(12, 0, 0, 0);
    expect((await api(testApiKey, 'POST', '/v2/test-helpers/clock/advance', { to: clockTo.toISOString() })).status).toBe(200);
    const link = await linkFor(testApiKey, id);
    expect(link.livemode).toBe(false);
    const address = newAddress();
    const page = await visit(link.path, { address });
    expect(page.html).toContain('Test mode');
    expect(page.html).toMatch(/Your subscription with merchant [0-9a-f]{8}</);
    const inTwoWeeks = new Date(clockTo.getTime() + 14 * DAY).toLocaleDateString('en-GB', {
      day: 'numeric',
      month: 'long',
      timeZone: 'UTC',
    });
    expect(page.html).toContain(`Pause for 14 days <span>until ${inTwoWeeks}</span>`);
    const { posted } = await submit(link.path, 'pause', { days: '14' }, address);
    expect(posted.status).toBe(303);
    const testSubscription = await api(testApiKey, 'GET', `/v2/subscriptions/${id}`);
    expect(testSubscription.body.status).toBe('paused');
    expect(Date.parse(testSubscription.body.schedule.resumeAt)).toBe(clockTo.getTime() + 14 * DAY);
    expect((await visit(link.path, { address })).html).toContain(`Paused until ${inTwoWeeks}`);
    expect(await t.db.collection('subscriptions').countDocuments({ merchantId })).toBe(0);
  });
});
