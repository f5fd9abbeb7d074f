import { expect, test } from '@playwright/test';
import { expectAccessible, hydrated, openSettings, screenshot, signIn } from './helpers';

test('an admin renames the workspace and finds the change in the audit log', async ({ page }) => {
  await signIn(page);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Settings', level: 1 })).toBeVisible();
  for (const section of ['Workspace', 'Users', 'Teams', 'Opening hours', 'Webhooks', 'API keys', 'Audit log']) {
    await expect(page.getByRole('main').getByRole('link', { name: section })).toBeVisible();
  }
  await expectAccessible(page);
  await screenshot(page, 'settings');

  await page.getByRole('main').getByRole('link', { name: 'Workspace' }).click();
  await expect(page.getByRole('heading', { name: 'Workspace', level: 1 })).toBeVisible();
  await hydrated(page);
  const name = `Default ${Date.now()}`;
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await page.reload();
  await expect(page.getByLabel('Name')).toHaveValue(name);
  await expect(page.locator('.account')).toContainText(name);
  await expect(page.getByRole('textbox', { name: 'widget key' })).toHaveValue(/.+/);
  await expectAccessible(page);
  await screenshot(page, 'workspace');

  await openSettings(page, 'Audit log');
  await expect(page.getByRole('heading', { name: 'Audit log', level: 1 })).toBeVisible();
  await page.getByLabel('Action').fill('tenant.*');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page).toHaveURL(/action=tenant/);
  await expect(page.getByRole('row', { name: /tenant\.update/ }).first()).toContainText('admin@rapport.test');
  await expectAccessible(page);
  await screenshot(page, 'audit-log');
});
