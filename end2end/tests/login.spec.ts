import { expect, test } from '@playwright/test';
import { adminEmail, adminPassword, createApiKey, expectAccessible, hydrated, screenshot, signIn } from './helpers';

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

test('a user sees where they are signed in and signs out a browser they no longer use', async ({ browser }) => {
  // An agent of their own, so that signing out other browsers touches no other test's session.
  const admin = await browser.newPage();
  await signIn(admin);
  const auth = { Authorization: `Bearer ${await createApiKey(admin)}` };
  const email = `ada.${Date.now()}@example.com`;
  const password = 'e2e-agent-password';
  const created = await admin.request.post('/rest/v1/user', {
    headers: auth,
    data: { email, displayName: 'Ada Lovelace', roleId: 'AGENT', password },
  });
  expect(created.status()).toBe(201);
  await admin.close();

  const laptop = await (await browser.newContext()).newPage();
  const phone = await (await browser.newContext()).newPage();
  await signIn(laptop, email, password);
  await signIn(phone, email, password);

  // Her name in the top bar leads to her account.
  await hydrated(laptop);
  await laptop.getByRole('link', { name: /Ada Lovelace/ }).click();
  await expect(laptop.getByRole('heading', { name: 'Your account', level: 1 })).toBeVisible();
  const rows = laptop.locator('table.sign-ins tbody tr');
  await expect(rows).toHaveCount(2);
  await expect(laptop.locator('tr.current')).toContainText('This browser');
  await expect(laptop.locator('tr.current')).toContainText('Chrome');
  await expectAccessible(laptop);
  await screenshot(laptop, 'account');

  await laptop.getByRole('button', { name: 'Sign out the other browser' }).click();
  await expect(rows).toHaveCount(1);
  await expect(laptop.getByText('No other browser is signed in as you.')).toBeVisible();
  // The phone must sign in again; the laptop stays signed in.
  await phone.goto('/');
  await expect(phone).toHaveURL(/\/login/);
  await laptop.reload();
  await expect(laptop.getByRole('heading', { name: 'Your account', level: 1 })).toBeVisible();
  await laptop.context().close();
  await phone.context().close();
});
