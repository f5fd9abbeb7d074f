import { expect, test } from '@playwright/test';
import { adminEmail, adminPassword } from './helpers';

test.use({ javaScriptEnabled: false });

test('sign-in, API keys and the presence switch work without JavaScript', async ({ page, request }) => {
  await page.goto('/login');
  await page.getByLabel('E-mail').fill(adminEmail);
  await page.getByLabel('Password', { exact: true }).fill(adminPassword);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText('Welcome');

  await page.goto('/settings/api-keys');
  const name = `No-JS key ${Date.now()}`;
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  await expect(page).toHaveURL(/\/settings\/api-keys/);
  const token = await page.locator('.secret .copy-value').inputValue();
  expect(token).toMatch(/^rpt_/);
  expect((await request.get(`/rest/v1/apikey?access_token=${token}`)).status()).toBe(200);

  // Shown once: a reload no longer has it.
  await page.reload();
  await expect(page.locator('.secret .copy-value')).toHaveCount(0);

  await page.getByRole('button', { name: `Revoke ${name}` }).click();
  await expect(page.getByRole('row', { name: new RegExp(name) })).toContainText('Revoked');
  expect((await request.get(`/rest/v1/apikey?access_token=${token}`)).status()).toBe(401);

  // The presence switch posts as a plain form and comes back to the page.
  const status = page.getByRole('group', { name: 'Your status' });
  await status.getByRole('button', { name: 'Offline' }).click();
  await expect(page).toHaveURL(/\/settings\/api-keys/);
  await expect(status.getByRole('button', { name: 'Offline' })).toHaveAttribute('aria-pressed', 'true');

  // Report charts are the server's SVG, and no empty canvas stands in their way.
  await page.goto('/reports/chats?grouping=LAST_MONTH');
  await expect(page.locator('figure.chart .chart-svg svg').first()).toBeVisible();
  await expect(page.locator('figure.chart canvas').first()).toBeHidden();

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/login/);
});
