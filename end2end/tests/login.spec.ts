import { expect, test } from '@playwright/test';
import { adminEmail, adminPassword, expectAccessible, hydrated, screenshot, signIn } from './helpers';

test('the bootstrap admin signs in and out', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveURL(/\/login/);
  await hydrated(page);
  await expectAccessible(page);
  await screenshot(page, 'login');

  await page.getByLabel('E-mail').fill(adminEmail);
  await page.getByLabel('Password', { exact: true }).fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toContainText('not right');
  await expect(page.getByLabel('E-mail')).toHaveValue(adminEmail);

  await signIn(page);
  await hydrated(page);
  const nav = page.getByRole('navigation', { name: 'Main' });
  for (const item of ['Home', 'Links', 'Reports', 'Settings', 'Tenants', 'Platform API', 'API reference']) {
    await expect(nav.getByRole('link', { name: item, exact: true })).toBeVisible();
  }
  await expectAccessible(page);
  await screenshot(page, 'home');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/login\?error=signed_out/);
  await page.goto('/settings/api-keys');
  await expect(page).toHaveURL(/\/login/);
});

test('the API reference lists the operations', async ({ page }) => {
  await signIn(page);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API reference' }).click();
  await expect(page.getByRole('heading', { name: 'REST API reference' })).toBeVisible();
  await expect(page.getByText('/rest/v1/tenant/{id}').first()).toBeVisible();
  await expectAccessible(page);
  await screenshot(page, 'api-reference');
});

test('a phone-sized screen keeps everything reachable', async ({ browser }) => {
  const context = await browser.newContext({ viewport: { width: 375, height: 740 } });
  const page = await context.newPage();
  await signIn(page);
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
  expect(overflow).toBe(false);
  await screenshot(page, 'home-phone');
  await context.close();
});
