import { expect, test } from '@playwright/test';
import { expectAccessible, hydrated, openSettings, screenshot, signIn } from './helpers';

test('an admin renames the workspace and finds the change in the audit log', async ({ page }) => {
  await signIn(page);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Settings', level: 1 })).toBeVisible();
  for (const section of ['Workspace', 'Users', 'Teams', 'Opening hours', 'System messages', 'Webhooks', 'API keys', 'Audit log']) {
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

test('an admin writes system messages per language', async ({ page }) => {
  await signIn(page);
  await openSettings(page, 'System messages');
  await expect(page.getByRole('heading', { name: 'System messages', level: 1 })).toBeVisible();
  await hydrated(page);
  const text = `Alle sind beschäftigt ${Date.now()}`;
  // A language that is no BCP 47 tag is refused at its field, keeping the text.
  await page.getByLabel('Language', { exact: true }).fill('German please');
  await page.getByLabel('Message').fill(text);
  await page.getByRole('button', { name: 'Add message' }).click();
  await expect(page.locator('#new-system-message-language-error')).toContainText('BCP 47');
  await expect(page.getByLabel('Message')).toHaveValue(text);
  await page.getByLabel('Language', { exact: true }).fill('de');
  await page.getByRole('button', { name: 'Add message' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Added a message in de.' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'German (de)', level: 3 })).toBeVisible();
  await page.getByLabel('Only the language').fill('de');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page).toHaveURL(/language=de/);
  await expectAccessible(page);
  await screenshot(page, 'system-messages');

  await page.getByRole('link', { name: text }).click();
  await expect(page.getByRole('heading', { name: 'System message', level: 1 })).toBeVisible();
  await hydrated(page);
  await page.getByLabel('Message').fill(`${text}, bitte warten`);
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await page.getByText('Delete this message…').click();
  await page.getByRole('button', { name: 'Delete permanently' }).click();
  await expect(page.getByRole('heading', { name: 'System messages', level: 1 })).toBeVisible();
  await expect(page.getByRole('link', { name: new RegExp(text) })).toHaveCount(0);
});
