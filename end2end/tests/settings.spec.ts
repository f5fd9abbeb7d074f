import { expect, test } from '@playwright/test';
import { expectAccessible, hydrated, openSettings, screenshot, signIn } from './helpers';

test('an admin renames the workspace and finds the change in the audit log', async ({ page }) => {
  await signIn(page);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Settings', level: 1 })).toBeVisible();
  for (const section of ['Workspace', 'Users', 'Teams', 'Opening hours', 'System messages', 'Routing rules', 'SLA rules', 'Watchdogs', 'Webhooks', 'API keys', 'Audit log']) {
    await expect(page.getByRole('main').getByRole('link', { name: new RegExp(`^${section}`) })).toBeVisible();
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

test('an admin sets up a watchdog with receivers', async ({ page }) => {
  await signIn(page);
  await openSettings(page, 'Watchdogs');
  await expect(page.getByRole('heading', { name: 'Watchdogs', level: 1 })).toBeVisible();
  await hydrated(page);
  const name = `Script errors ${Date.now()}`;
  const form = page.locator('form').filter({ has: page.getByRole('button', { name: 'Add watchdog' }) });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Watches').selectOption('JAVASCRIPT_ERROR');
  await form.getByLabel('Receiver 1', { exact: true }).fill('not an address');
  await form.getByRole('button', { name: 'Add watchdog' }).click();
  // The problem shows at the row, and what was typed stays.
  await expect(page.locator('#new-receiver-0-error')).toContainText('e-mail');
  await expect(form.getByLabel('Name')).toHaveValue(name);

  await form.getByLabel('Receiver 1', { exact: true }).fill('ops@example.com');
  // Once the page is live, rows are added in place; a USER row suggests the tenant's users.
  await form.getByRole('button', { name: 'Add a receiver' }).click();
  await form.getByLabel('Receiver 3 kind').selectOption('USER');
  await expect(form.getByLabel('Receiver 3', { exact: true })).toHaveAttribute('list', 'new-watchdog-users');
  const adminId = await page.locator('#new-watchdog-users option').first().getAttribute('value');
  await form.getByLabel('Receiver 3', { exact: true }).fill(adminId!);
  await form.getByRole('button', { name: 'Add watchdog' }).click();
  await expect(page.getByRole('status').filter({ hasText: `Watchdog ${name} added.` })).toBeVisible();
  const row = page.getByRole('row', { name: new RegExp(name) });
  await expect(row).toContainText('A script error on your site');
  await expect(row).toContainText('ops@example.com');
  await expectAccessible(page);
  await screenshot(page, 'watchdogs');

  await row.getByRole('link', { name }).click();
  await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
  await hydrated(page);
  await expect(page.getByLabel('Receiver 1', { exact: true })).toHaveValue('ops@example.com');
  await expect(page.getByLabel('Receiver 2', { exact: true })).toHaveValue(adminId!);
  await page.getByLabel('Receiver 1', { exact: true }).fill('');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await expect(page.getByLabel('Receiver 1', { exact: true })).toHaveValue(adminId!);
  await expectAccessible(page);
  await page.getByText('Delete this watchdog…').click();
  await page.getByRole('button', { name: 'Delete permanently' }).click();
  await expect(page).toHaveURL(/\/settings\/watchdogs$/);
  await expect(page.getByRole('link', { name })).toHaveCount(0);
});
