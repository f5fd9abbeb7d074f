// The visitor script on a customer's website, as the tests drive it: the demo
// shop, served from DEMO_URL (another origin than Rapport's BASE_URL) with the
// snippet filled in with the default workspace's widget key. Shared by the
// specs that play a visitor.
import { Browser, BrowserContext, expect, Page } from '@playwright/test';
import { createApiKey, signIn } from './helpers';

export const demoUrl = (process.env.DEMO_URL ?? 'http://127.0.0.1:3001').replace(/\/$/, '');

/** The workspace the shop embeds: an API key's headers, and its widget key.
 * Set by `connectShop`, in a spec's `beforeAll`. */
export const shop = { auth: {} as Record<string, string>, widgetKey: '' };

/** Signs in as the admin, makes an API key and reads the widget key. */
export async function connectShop(browser: Browser) {
  const page = await browser.newPage();
  await signIn(page);
  shop.auth = { Authorization: `Bearer ${await createApiKey(page)}` };
  const key = await page.request.get('/rest/v1/widget/key', { headers: shop.auth });
  expect(key.status()).toBe(200);
  shop.widgetKey = (await key.json()).widgetKey;
  await page.close();
}

/** A visitor's browser: records uncaught errors of the page. */
export async function visitor(
  browser: Browser,
  options = {},
): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { context, page, errors };
}

/** Opens a demo page and checks it embeds this server's widget key. */
export async function openDemo(page: Page, path = 'index.html') {
  await page.goto(`${demoUrl}/${path}`);
  await expect(page.locator('script[data-rapport-key]')).toHaveAttribute('data-rapport-key', shop.widgetKey);
}

export const widget = (page: Page) => page.locator('rapport-widget');
export const launcher = (page: Page) => widget(page).getByRole('button', { name: /^Chat with us/ });
export const dialog = (page: Page) => widget(page).getByRole('dialog', { name: 'Chat with us' });
export const log = (page: Page) => widget(page).getByRole('log', { name: 'Messages' });

/** The visitor's ids, as the script keeps them. */
export async function ids(page: Page): Promise<{ visitorId: string; customerId?: string }> {
  return page.evaluate((key) => {
    const stored = JSON.parse(localStorage.getItem(`rapport:${key}:visitor`) || 'null');
    return { visitorId: (window as any).Rapport.visitorId(), customerId: stored?.customerId };
  }, shop.widgetKey);
}

/** Writes in the open widget and waits until the message is sent. */
export async function write(page: Page, text: string) {
  await dialog(page).getByRole('textbox', { name: 'Your message' }).fill(text);
  await dialog(page).getByRole('button', { name: 'Send' }).click();
  const bubble = log(page).locator('.msg', { hasText: text });
  await expect(bubble).toBeVisible();
  await expect(bubble).not.toContainText('Sending');
  await expect(bubble).not.toHaveClass(/failed/);
}
