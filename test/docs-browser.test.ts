/**
 * The docs page in a real browser: Debian's Chromium (installed by .ci/run), driven by
 * playwright-core. A screenshot goes to test-artifacts/ (ignored by git).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) console.log(`skipping the browser test: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`);

let t: TestService;
let browser: Browser;
beforeAll(async () => {
  if (!available) return;
  t = await startTestService();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!available)('the docs page in Chromium', () => {
  it('renders both operations from the spec', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.baseUrl}/docs`);
    const heading = (text: string) => page.locator('h2', { hasText: text });
    await heading('Pause a subscription, or many at once').waitFor({ timeout: 30_000 });
    expect(await heading('Pause a subscription, or many at once').isVisible()).toBe(true);
    expect(await heading('Resume a subscription, or many at once').isVisible()).toBe(true);
    expect(await page.title()).toBe('Subscription Pause and Resume API');
    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/docs.png', fullPage: false });
    await page.close();
  });
});
