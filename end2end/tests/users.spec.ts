import { expect, test } from '@playwright/test';
import { expectAccessible, hydrated, openSettings, screenshot, signIn } from './helpers';

test('an admin adds an agent, who cannot open settings, then edits, resets and deletes them', async ({ page, browser }) => {
  await signIn(page);
  await openSettings(page, 'Users');
  await expect(page.getByRole('heading', { name: 'Users', level: 1 })).toBeVisible();
  await hydrated(page);

  const email = `agent-${Date.now()}@rapport.test`;
  const add = page.locator('form').filter({ has: page.getByRole('button', { name: 'Add user' }) });
  await add.getByLabel('E-mail').fill(email);
  await add.getByLabel('Display name').fill('Sam Agent');
  // A tag over 64 characters is refused at its field, and nothing is lost.
  await add.getByLabel('Tags').fill(`billing, ${'x'.repeat(65)}`);
  await add.getByRole('button', { name: 'Add user' }).click();
  await expect(page.locator('#new-user-tags-error')).toBeVisible();
  await expect(add.getByLabel('E-mail')).toHaveValue(email);

  await add.getByLabel('Tags').fill('billing, de');
  await add.getByRole('button', { name: 'Add user' }).click();
  const password = await page.locator('.secret .copy-value').inputValue();
  expect(password.length).toBeGreaterThanOrEqual(12);
  await page.getByLabel('Search by e-mail or name').fill(email);
  await page.getByRole('button', { name: 'Search' }).click();
  // The search is a plain GET form: a new page, which hydrates again before
  // its links navigate in place.
  await hydrated(page);
  const row = page.getByRole('row', { name: new RegExp(email) });
  await expect(row).toContainText('Agent');
  await expect(row).toContainText('billing');
  await expectAccessible(page);
  await screenshot(page, 'users');

  // The new agent signs in with the generated password and cannot reach settings.
  const other = await browser.newContext();
  const agent = await other.newPage();
  await signIn(agent, email, password);
  await expect(agent.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' })).toHaveCount(0);
  await agent.goto('/settings/users');
  await expect(agent.getByRole('heading', { name: 'Not available to your role' })).toBeVisible();
  await agent.goto('/settings/webhooks');
  await expect(agent.getByRole('heading', { name: 'Not available to your role' })).toBeVisible();

  // Promote to supervisor and reset the password; the old one stops working.
  await row.getByRole('link', { name: email }).click();
  await expect(page.getByRole('heading', { name: 'Sam Agent', level: 1 })).toBeVisible();
  await hydrated(page);
  await page.getByLabel('Role').selectOption('SUPERVISOR');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await expect(page.getByLabel('Role')).toHaveValue('SUPERVISOR');
  await page.getByRole('button', { name: 'Reset password' }).click();
  const newPassword = await page.locator('.secret .copy-value').inputValue();
  expect(newPassword).not.toBe(password);
  await expectAccessible(page);
  await screenshot(page, 'user');

  await agent.goto('/');
  await expect(agent).toHaveURL(/\/login/);
  await signIn(agent, email, newPassword);
  await expect(agent.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reports' })).toBeVisible();
  await other.close();

  await page.getByText('Delete this user…').click();
  await page.getByRole('button', { name: 'Delete permanently' }).click();
  await expect(page.getByRole('heading', { name: 'Users', level: 1 })).toBeVisible();
  await page.getByLabel('Search by e-mail or name').fill(email);
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(page.getByText('No user matches')).toBeVisible();
});
