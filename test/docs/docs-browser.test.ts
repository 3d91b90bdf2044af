/**
 * The docs page (the reference and console in one) in a real browser: Debian's Chromium (installed
 * by .ci/run), driven by playwright-core, on a wide window and at 320 and 375 px, as
 * test/portal/portal-browser.test.ts checks
 * the customers' page. Screenshots go to test-artifacts/ (ignored by git).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available)
  console.log(`skipping the browser test: no Chromium at ${CHROMIUM}; to run it: apt-get install chromium (as root), or set CHROMIUM_PATH`);

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
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!available)('the docs page in Chromium', () => {
  it('renders the operations from the spec, with curl and client samples and the error-code table, asking nothing of other hosts', async () => {
    const page = await browser.newPage();
    const outside = requestsElsewhere(page);
    await page.goto(`${t.baseUrl}/docs#tag/subscriptions/GET/v2/subscriptions/{subscriptionId}`);
    const heading = (text: string) => page.locator('h3', { hasText: text });
    await heading('Read a subscription').waitFor({ timeout: 30_000 });
    expect(await page.title()).toBe('Subscription Pause and Resume API');
    expect(await page.getByText('Pause a subscription, or many at once').first().isVisible()).toBe(true);
    expect(await page.getByText('Resume a subscription, or many at once').first().isVisible()).toBe(true);
    // A GET shows its curl sample first; the generated client's is one choice away.
    const curl = await page.locator('pre, code', { hasText: 'curl -s' }).allTextContents();
    expect(curl.map((text) => text.trim())).toContain(
      `curl -s 'http://localhost:8080/v2/subscriptions/6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60' -H "x-api-key: $API_KEY"`,
    );
    await page.getByRole('button', { name: /^curl/ }).first().click();
    expect(await page.getByRole('option', { name: 'TypeScript (generated client)' }).count()).toBeGreaterThan(0);
    await page.keyboard.press('Escape');
    // The webhooks' AsyncAPI document is linked from the reference's introduction.
    expect(await page.getByRole('link', { name: '/docs/asyncapi.yaml' }).getAttribute('href')).toBe('/docs/asyncapi.yaml');
    await page.getByText('Error codes', { exact: true }).first().click();
    await page.locator('td', { hasText: 'do not retry: a cancelled subscription never changes' }).first().waitFor({ timeout: 10_000 });
    expect(await page.locator('td', { hasText: 'do not retry: a cancelled subscription never changes' }).count()).toBe(1);
    expect(outside).toEqual([]);
    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/docs.png', fullPage: false });
    await page.close();
  });

  it("is a console too (old /docs/try links lead to it) that lists the caller's subscriptions with the key typed into its empty key box, on this service, sending no example", async () => {
    const { merchantId, apiKey } = await t.merchant();
    const [subscription] = await t.service.seeder.seed({ merchantId, count: 1, status: 'fulfilled' });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const outside = requestsElsewhere(page);
    await page.goto(`${t.baseUrl}/docs/try#tag/subscriptions/GET/v2/subscriptions`);
    await page.locator('button', { hasText: 'Test Request(get /v2/subscriptions)' }).click({ timeout: 30_000 });
    const client = page.getByRole('dialog');
    const keyBox = client.getByPlaceholder('sk_test_…');
    expect(await keyBox.inputValue()).toBe('');
    expect(await client.innerText()).toContain(`Server:\n${t.baseUrl}\n`);
    await keyBox.click();
    await page.keyboard.type(apiKey);
    const sent = page.waitForRequest((r) => r.url().startsWith(`${t.baseUrl}/v2/subscriptions`));
    await client.getByRole('button', { name: /^Send/ }).first().click();
    // No example cursor or status filter goes out: the page lists the subscription just made.
    expect((await sent).url()).toBe(`${t.baseUrl}/v2/subscriptions`);
    await client.getByText('200 OK').first().waitFor({ timeout: 15_000 });
    expect(await client.getByText(subscription!.id).count()).toBeGreaterThan(0);
    expect(outside).toEqual([]);
    await page.screenshot({ path: 'test-artifacts/docs-try.png', fullPage: false });
    await page.close();
  }, 60_000);
});

/** Whether two boxes share any area. */
const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
type Box = { x: number; y: number; width: number; height: number };
const EXAMPLE_ID = '6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60';

describe.skipIf(!available)('the docs pages on a small screen', () => {
  it.each([320, 375])(
    'at %i px the reference is no wider than the window and claims no licence',
    async (width) => {
      const page = await browser.newPage({ viewport: { width, height: 700 } });
      await page.goto(`${t.baseUrl}/docs`);
      await page.locator('h1', { hasText: 'Subscription Pause and Resume API' }).waitFor({ timeout: 30_000 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
      expect(await page.getByText('UNLICENSED').count()).toBe(0);
      await page.screenshot({ path: `test-artifacts/docs-${width}.png`, fullPage: false });
      await page.close();
    },
    60_000,
  );

  it.each([320, 375])(
    "at %i px the console's request window leaves a read's id to fill in, names npm start for the key, keeps its sidebar toggle off the server box, and claims no licence",
    async (width) => {
      const page = await browser.newPage({ viewport: { width, height: 700 } });
      await page.goto(`${t.baseUrl}/docs#tag/subscriptions/GET/v2/subscriptions/{subscriptionId}`);
      await page.locator('button', { hasText: 'Test Request(get /v2/subscriptions/{subscriptionId})' }).first().click({ timeout: 30_000 });
      const client = page.getByRole('dialog');
      const server = client.getByText(t.baseUrl).first();
      await server.waitFor({ timeout: 15_000 });
      // An example id would be sent as it is, and answer 404: the id is the user's to give.
      expect(await client.innerText()).not.toContain(EXAMPLE_ID);
      expect(await client.innerText()).toContain('npm start prints a live key and a test key');
      const toggle = (await client.getByRole('button', { name: 'Show sidebar' }).boundingBox())!;
      expect(overlap(toggle, (await server.boundingBox())!)).toBe(false);
      expect(await page.getByText('UNLICENSED').count()).toBe(0);
      await page.screenshot({ path: `test-artifacts/docs-try-${width}.png`, fullPage: false });
      await page.close();
    },
    60_000,
  );
});

/** URLs the page asks of any host but the service (its own blob: workers aside). */
function requestsElsewhere(page: Page): string[] {
  const outside: string[] = [];
  page.on('request', (r) => (/^(data|blob):/.test(r.url()) || r.url().startsWith(t.baseUrl) ? undefined : outside.push(r.url())));
  return outside;
}
