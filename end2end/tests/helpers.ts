import { expect, Page } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import * as fs from 'fs';
import * as path from 'path';

export const adminEmail = process.env.ADMIN_EMAIL ?? 'admin@rapport.test';
export const adminPassword = process.env.ADMIN_PASSWORD ?? 'e2e-admin-password';

/** Waits until the wasm bundle has hydrated the page (the app sets this flag). */
export async function hydrated(page: Page) {
  await page.waitForFunction(() => document.documentElement.dataset.hydrated === 'true', null, { timeout: 20_000 });
}

/** Signs in through the login form. */
export async function signIn(page: Page, email = adminEmail, password = adminPassword, workspace?: string) {
  await page.goto('/login');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  if (workspace) {
    await page.getByText('Sign in to a specific workspace').click();
    await page.getByLabel('Workspace').fill(workspace);
  }
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Welcome');
}

/** Saves a full-page screenshot under end2end/screenshots/. */
export async function screenshot(page: Page, name: string) {
  const dir = path.join(__dirname, '..', 'screenshots');
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

/** Fails on serious or critical accessibility violations. `inPlace` checks
 * without axe's helper page, which cannot open beside the session player's
 * sandboxed iframe. */
export async function expectAccessible(page: Page, inPlace = false) {
  const results = await new AxeBuilder({ page }).setLegacyMode(inPlace).analyze();
  const serious = results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(serious.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`)).toEqual([]);
}

/** Creates a tenant API key through the dashboard (signed in as an admin) and returns its token. */
export async function createApiKey(page: Page, name = `e2e ${Date.now()}`): Promise<string> {
  await page.goto('/settings/api-keys');
  await hydrated(page);
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = page.locator('.secret .copy-value');
  await expect(secret).toBeVisible();
  return secret.inputValue();
}

/** Opens a settings section from the main navigation's Settings page. */
export async function openSettings(page: Page, section: string) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Settings', level: 1 })).toBeVisible();
  // A card's name is its heading then its description: match the heading.
  await page.getByRole('main').getByRole('link', { name: new RegExp(`^${section}`) }).click();
}
