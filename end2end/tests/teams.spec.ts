import { expect, test } from '@playwright/test';
import { adminEmail, expectAccessible, hydrated, openSettings, screenshot, signIn } from './helpers';

test('an admin builds a team with the member picker, edits it and deletes it', async ({ page }) => {
  await signIn(page);
  await openSettings(page, 'Teams');
  await expect(page.getByRole('heading', { name: 'Teams', level: 1 })).toBeVisible();
  await hydrated(page);

  const name = `Billing ${Date.now()}`;
  await page.getByRole('textbox', { name: 'Name' }).fill(name);
  await page.getByLabel('Tags').fill('billing, de');
  // The filter narrows the picker; the admin ticks themself.
  await page.getByLabel('Filter people').fill(adminEmail.slice(0, 5));
  const me = page.getByRole('checkbox', { name: new RegExp(adminEmail) });
  await expect(me).toBeVisible();
  await me.check();
  await page.getByRole('button', { name: 'Add team' }).click();
  await expect(page.getByRole('status').filter({ hasText: `Team ${name} added.` })).toBeVisible();
  const row = page.getByRole('row', { name: new RegExp(name) });
  await expect(row).toContainText('billing');
  await expectAccessible(page);
  await screenshot(page, 'teams');

  await row.getByRole('link', { name }).click();
  await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
  await hydrated(page);
  await expect(page.getByRole('checkbox', { name: new RegExp(adminEmail) })).toBeChecked();
  await page.getByLabel('Name').fill(`${name} EU`);
  await page.getByRole('checkbox', { name: new RegExp(adminEmail) }).uncheck();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await expect(page.getByRole('heading', { name: `${name} EU`, level: 1 })).toBeVisible();
  await expect(page.getByRole('checkbox', { name: new RegExp(adminEmail) })).not.toBeChecked();
  await expectAccessible(page);

  await page.getByText('Delete this team…').click();
  await page.getByRole('button', { name: 'Delete permanently' }).click();
  await expect(page.getByRole('heading', { name: 'Teams', level: 1 })).toBeVisible();
  await expect(page.getByRole('row', { name: new RegExp(name) })).toHaveCount(0);
});
