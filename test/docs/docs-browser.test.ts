/**
 * The docs page in a real browser: Debian's Chromium (installed by .ci/run), driven by
 * playwright-core, on a wide window and at 320 and 375 px, as test/portal/portal-browser.test.ts checks
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
    await page.goto(`${t.baseUrl}/docs`);
    const heading = (text: string) => page.locator('h2', { hasText: text });
    await heading('Pause a subscription, or many at once').waitFor({ timeout: 30_000 });
    expect(await heading('Pause a subscription, or many at once').isVisible()).toBe(true);
    expect(await heading('Resume a subscription, or many at once').isVisible()).toBe(true);
    expect(await page.title()).toBe('Subscription Pause and Resume API');
    expect(await page.getByText('Error codes', { exact: true }).first().isVisible()).toBe(true);
    expect(await page.locator('td', { hasText: 'do not retry: a cancelled subscription never changes' }).count()).toBe(1);
    expect(await page.getByRole('tab', { name: 'TypeScript (generated client)' }).count()).toBeGreaterThan(0);
    // A GET shows its curl sample first (a POST shows its payload first, with curl a tab away).
    const curl = await page.locator('pre', { hasText: 'curl -s' }).allTextContents();
    expect(curl).toContain(
      `curl -s 'http://localhost:8080/v2/subscriptions/6f1c2a4e-3b7d-4c8e-9f0a-1b2c3d4e5f60' -H "x-api-key: $API_KEY"`,
    );
    // The console is one click away: the bar above the reference leads to it.
    expect(await page.getByRole('link', { name: 'open the console (/docs/try)' }).getAttribute('href')).toBe('/docs/try');
    // Redoc's footer logo, once asked of cdn.redoc.ly, comes from here.
    await page.getByRole('img', { name: 'redocly logo' }).waitFor({ timeout: 10_000 });
    expect(outside).toEqual([]);
    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/docs.png', fullPage: false });
    await page.close();
  });

  it("has a console (/docs/try) that lists the caller's subscriptions with the key typed into its empty key box, on this service, sending no example", async () => {
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
    'at %i px the bar above the reference shows both its links whole, nothing is wider than the window, and no licence is claimed',
    async (width) => {
      const page = await browser.newPage({ viewport: { width, height: 700 } });
      await page.goto(`${t.baseUrl}/docs`);
      await page.locator('h2', { hasText: 'Pause a subscription, or many at once' }).waitFor({ timeout: 30_000 });
      const bar = (await page.locator('#console-link').boundingBox())!;
      expect(bar.height).toBeLessThanOrEqual(48);
      for (const link of await page.locator('#console-link a').all()) {
        const box = (await link.boundingBox())!;
        expect({
          box,
          inBar: box.y >= bar.y && box.y + box.height <= bar.y + bar.height,
          onScreen: box.x >= 0 && box.x + box.width <= width,
        }).toMatchObject({
          inBar: true,
          onScreen: true,
        });
      }
      expect(await page.locator('#console-link a').first().getAttribute('href')).toBe('/docs/try');
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
      await page.goto(`${t.baseUrl}/docs/try#tag/subscriptions/GET/v2/subscriptions/{subscriptionId}`);
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
