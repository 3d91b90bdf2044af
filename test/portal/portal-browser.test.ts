/**
 * The customer's portal page in a real browser (issue 47): Debian's Chromium, driven by
 * playwright-core as the docs page's test does. A customer pauses for 14 days and resumes, by
 * mouse, by keyboard alone, and with JavaScript off; axe-core finds no violation in any state;
 * the page fits 320 px and 200% zoom and asks nothing of other hosts. A screenshot of each state at
 * 375 px and 1280 px goes to test-artifacts/portal/ (ignored by git), for a reviewer to look at.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/http.js';
import { startTestService, type TestService } from '../support/service.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available)
  console.log(
    `skipping the portal browser test: no Chromium at ${CHROMIUM}; to run it: apt-get install chromium (as root), or set CHROMIUM_PATH`,
  );

/** axe-core from node_modules (a devDependency); AXE_CORE_PATH names another copy of axe.min.js. */
function axeSource(): string | undefined {
  const path = process.env.AXE_CORE_PATH ?? resolved('axe-core/axe.min.js');
  return path && existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}
function resolved(specifier: string): string | undefined {
  try {
    return createRequire(import.meta.url).resolve(specifier);
  } catch {
    return undefined;
  }
}
const axe = axeSource();
if (available && !axe)
  console.log('the portal browser test fails its accessibility checks: axe-core is not installed (npm ci installs it)');

const SHOTS = 'test-artifacts/portal';
let t: TestService;
let browser: Browser;
beforeAll(async () => {
  if (!available) return;
  t = await startTestService();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A new customer's link: a merchant named for the shop, one active subscription. */
async function newLink(mode: 'live' | 'test' = 'live'): Promise<{ url: string; id: string; apiKey: string }> {
  const merchant = await t.service.auth.createMerchant('Hillside Coffee Roasters');
  const apiKey = mode === 'live' ? merchant.apiKey : merchant.testApiKey;
  const id =
    mode === 'live'
      ? (await t.seed(merchant.merchantId, 1))[0]!
      : (await call(t.baseUrl, '/v2/test-helpers/subscriptions', { apiKey, json: { count: 1 } })).body.data[0].id;
  const made = await call(t.baseUrl, `/v2/subscriptions/${id}/portal-links`, { apiKey });
  expect(made.status).toBe(201);
  return { url: made.body.url, id, apiKey };
}

/** URLs the page asks of any host but the service. */
function requestsElsewhere(page: Page): string[] {
  const outside: string[] = [];
  page.on('request', (r) => (r.url().startsWith(t.baseUrl) ? undefined : outside.push(r.url())));
  return outside;
}

/** axe-core's violations on the page as it is (WCAG 2.1 AA and best practices), by rule and target. */
async function violations(page: Page): Promise<string[]> {
  expect(axe, 'axe-core is installed (a devDependency)').toBeDefined();
  // Evaluated through the DevTools protocol: the page's CSP, which allows no script, does not apply.
  await page.evaluate(axe!);
  const found = await page.evaluate(async () => {
    const result = await (
      window as unknown as { axe: { run(): Promise<{ violations: { id: string; nodes: { target: string[] }[] }[] }> } }
    ).axe.run();
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  return found;
}

/** Screenshots at 375 px and 1280 px wide, then the viewport as it was. */
async function shoot(page: Page, state: string): Promise<void> {
  const before = page.viewportSize();
  for (const width of [375, 1280]) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: `${SHOTS}/${state}-${width}.png`, fullPage: true });
  }
  if (before) await page.setViewportSize(before);
}

const stateText = (page: Page) => page.locator('#state').innerText();
/** Waits for the page the post led to: its one-line confirmation. */
const confirmed = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text }).waitFor({ timeout: 15_000 });

describe.skipIf(!available)('the portal page in Chromium', () => {
  it('pauses for 14 days by clicking, shows the confirmation, resumes; no axe violation in any state, nothing from other hosts', async () => {
    const { url, id, apiKey } = await newLink();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const outside = requestsElsewhere(page);
    const consoleErrors: string[] = [];
    page.on('console', (m) => (m.type() === 'error' ? consoleErrors.push(m.text()) : undefined));
    await page.goto(url);
    expect(await page.title()).toBe('Your subscription with Hillside Coffee Roasters');
    expect(await stateText(page)).toBe('Active');
    expect(await violations(page)).toEqual([]);
    await shoot(page, 'active');

    await page.getByRole('button', { name: /Pause for 14 days/ }).click();
    await confirmed(page, 'Done: your subscription is paused.');
    expect(page.url()).toBe(url);
    expect(await stateText(page)).toMatch(/^Paused until \d{1,2} [A-Z][a-z]+( \d{4})?$/);
    expect(await violations(page)).toEqual([]);
    await shoot(page, 'paused');
    expect((await call(t.baseUrl, `/v2/subscriptions/${id}`, { method: 'GET', apiKey })).body.status).toBe('paused');

    await page.getByRole('button', { name: 'Resume now' }).click();
    await confirmed(page, 'Done: your subscription is active again.');
    expect(await stateText(page)).toBe('Active');
    expect(await violations(page)).toEqual([]);
    await shoot(page, 'resumed');
    expect(outside).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it('a refused pause: the page it returns to says why, a reload posts nothing, and the page offers no pause until it may', async () => {
    const { url, id, apiKey } = await newLink();
    const on = (method: string, path: string, json?: unknown) => call(t.baseUrl, path, { method, apiKey, json });
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const posts: string[] = [];
    page.on('request', (r) => (r.method() === 'POST' ? posts.push(r.url()) : undefined));
    await page.goto(url);
    // While the page stands open, the policy allows one pause a year and the subscription uses it up.
    const policy = { maxPauseDays: null, maxPausesPerYear: 1, requireResumeAt: false };
    expect((await on('PUT', '/v2/pause-policy', policy)).status).toBe(200);
    expect((await on('POST', `/v2/subscriptions/${id}/pause`)).status).toBe(200);
    expect((await on('POST', `/v2/subscriptions/${id}/resume`)).status).toBe(200);

    await page.getByRole('button', { name: /Pause for 14 days/ }).click();

    await page.getByRole('alert').filter({ hasText: 'paused at most 1 times in a year' }).waitFor({ timeout: 15_000 });
    expect(page.url()).toBe(url);
    expect(await page.locator('#pause-blocked').innerText()).toMatch(/You can pause it again from \d{1,2} [A-Z][a-z]+( \d{4})?\.$/);
    expect(await page.getByRole('button').count()).toBe(0);
    expect(await violations(page)).toEqual([]);
    await shoot(page, 'refused');
    await page.reload();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(posts).toEqual([`${url}/pause`]);
    expect((await on('GET', `/v2/subscriptions/${id}`)).body.status).toBe('fulfilled');
    await page.close();
  }, 60_000);

  it('does the same with the keyboard alone, each focused control outlined', async () => {
    const { url } = await newLink();
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(url);
    const focused = () =>
      page.evaluate(() => {
        const element = document.activeElement as HTMLElement;
        const style = getComputedStyle(element);
        return { text: element.innerText, outline: style.outlineStyle, width: style.outlineWidth };
      });
    await page.keyboard.press('Tab');
    expect((await focused()).text).toMatch(/^Pause for 7 days/);
    await page.keyboard.press('Tab');
    const fourteen = await focused();
    expect(fourteen.text).toMatch(/^Pause for 14 days/);
    expect([fourteen.outline, fourteen.width]).toEqual(['solid', '3px']);
    await page.keyboard.press('Enter');
    await confirmed(page, 'Done: your subscription is paused.');
    await page.keyboard.press('Tab');
    expect((await focused()).text).toBe('Resume now');
    await page.keyboard.press('Space');
    await confirmed(page, 'Done: your subscription is active again.');
    expect(await stateText(page)).toBe('Active');
    await page.close();
  }, 60_000);

  it('works with JavaScript off', async () => {
    const { url } = await newLink();
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(url);
    await page.getByRole('button', { name: /Pause for 30 days/ }).click();
    await confirmed(page, 'Done: your subscription is paused.');
    await context.close();
  }, 60_000);

  it('is readable at 320 px wide and at 200% zoom: nothing wider than the window', async () => {
    const { url } = await newLink();
    for (const { width, scale } of [
      { width: 320, scale: 1 },
      { width: 640, scale: 2 },
    ]) {
      const context = await browser.newContext({ viewport: { width: width / scale, height: 700 }, deviceScaleFactor: scale });
      const page = await context.newPage();
      await page.goto(url);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBe(0);
      const buttons = await page.getByRole('button').all();
      for (const button of buttons)
        expect((await button.boundingBox())!.x + (await button.boundingBox())!.width).toBeLessThanOrEqual(width / scale);
      await context.close();
    }
  }, 60_000);

  it("shows the plan's name on one line at 320 and 375 px, and its id, within the window, until it has one", async () => {
    const { url, id, apiKey } = await newLink();
    const { planId } = (await call(t.baseUrl, `/v2/subscriptions/${id}`, { method: 'GET', apiKey })).body;
    const plan = (page: Page) => page.locator('dt:text-is("Plan") + dd');
    const page = await browser.newPage({ viewport: { width: 375, height: 700 } });
    await page.goto(url);
    expect(await plan(page).innerText()).toBe(planId);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);

    expect((await call(t.baseUrl, `/v2/plans/${planId}`, { method: 'PUT', apiKey, json: { name: 'Coffee beans, monthly' } })).status).toBe(
      200,
    );
    for (const width of [320, 375]) {
      await page.setViewportSize({ width, height: 700 });
      await page.goto(url);
      expect(await plan(page).innerText()).toBe('Coffee beans, monthly');
      const lineHeight = await plan(page).evaluate((dd) => parseFloat(getComputedStyle(dd).lineHeight));
      expect((await plan(page).boundingBox())!.height).toBeLessThanOrEqual(lineHeight);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
      await page.screenshot({ path: `${SHOTS}/plan-named-${width}.png`, fullPage: true });
    }
    await page.close();
  }, 60_000);

  it('shows the cancelled, test mode and not-found states with no axe violation', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const cancelled = await newLink();
    await t.db.collection('subscriptions').updateOne({ _id: cancelled.id as never }, { $set: { status: 'cancelled' } });
    await page.goto(cancelled.url);
    expect(await stateText(page)).toBe('Cancelled');
    expect(await violations(page)).toEqual([]);
    await shoot(page, 'cancelled');

    const test = await newLink('test');
    await page.goto(test.url);
    expect(await page.getByRole('note').innerText()).toContain('Test mode');
    expect(await violations(page)).toEqual([]);
    await shoot(page, 'test-mode');

    const missing = await page.goto(`${t.baseUrl}/portal/${'x'.repeat(43)}`);
    expect(missing?.status()).toBe(404);
    expect(await violations(page)).toEqual([]);
    await shoot(page, 'not-found');
    await page.close();
  }, 60_000);
});
