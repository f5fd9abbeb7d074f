import { expect, test } from '@playwright/test';
import { expectAccessible, hydrated, openSettings, screenshot, signIn } from './helpers';

test('an agent schedules an appointment and copies its link', async ({ page, context }) => {
  test.setTimeout(90_000);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await signIn(page);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Appointments' }).click();
  await expect(page.getByRole('heading', { name: 'Appointments', level: 1 })).toBeVisible();
  await hydrated(page);
  await expectAccessible(page);
  await screenshot(page, 'appointments-week');

  // Next week, a slot at 10:00 opens the form with that start.
  await page.getByRole('link', { name: 'Next week ›' }).click();
  await expect(page).toHaveURL(/view=week&date=/);
  await page.getByRole('link', { name: /at 10:00$/ }).first().click();
  await expect(page.getByRole('heading', { name: 'New appointment', level: 1 })).toBeVisible();
  await hydrated(page);
  await expect(page.getByLabel('Starts')).toHaveValue(/T10:00$/);
  const title = `Contract review ${Date.now()}`;
  await page.getByLabel('Title').fill(title);
  await page.getByLabel("Attendees' e-mails").fill('client@example.org, not-an-address');
  await page.getByLabel('Send invitations to the attendees when saving').check();
  await page.getByRole('button', { name: 'Schedule' }).click();
  // A bad address is refused at its field; what was typed stays.
  await expect(page.locator('#new-appointment-attendees-error')).toBeVisible();
  await expect(page.getByLabel('Title')).toHaveValue(title);
  await page.getByLabel("Attendees' e-mails").fill('client@example.org');
  await page.getByRole('button', { name: 'Schedule' }).click();

  await expect(page).toHaveURL(/\/appointments\/[0-9a-f-]{36}$/);
  await expect(page.getByRole('heading', { name: title, level: 1 })).toBeVisible();
  await hydrated(page);
  const link = page.getByRole('textbox', { name: 'join link' });
  await expect(link).toHaveValue(/\/join\/[A-Za-z0-9_-]{20,}$/);
  await page.getByRole('button', { name: 'Copy join link' }).click();
  await expect(page.getByText('Copied to the clipboard')).toBeAttached();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toBe(await link.inputValue());
  await expect(page.getByText('Not open yet')).toBeVisible();
  await expect(page.getByText(/The link works from .* to .*\./)).toBeVisible();

  await page.getByRole('button', { name: 'Turn recording on' }).click();
  await expect(page.getByText('The meeting will be recorded.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Turn recording off' })).toBeVisible();
  await expectAccessible(page);
  await screenshot(page, 'appointment');

  // The calendar shows it in its hour.
  await page.getByRole('main').getByRole('link', { name: /T?\d{4}-\d{2}-\d{2} 10:00–10:30/ }).click();
  await expect(page.getByRole('link', { name: new RegExp(`10:00–10:30 ${title}`) })).toBeVisible();
  await page.getByRole('link', { name: 'Month' }).click();
  await expect(page.getByRole('link', { name: new RegExp(title) })).toBeVisible();
  await expectAccessible(page);
  await screenshot(page, 'appointments-month');

  // The invitation waits in the outbox (no SMTP server in the test run).
  await openSettings(page, 'Mail outbox');
  await expect(page.getByRole('heading', { name: 'Mail outbox', level: 1 })).toBeVisible();
  const mail = page.getByRole('listitem').filter({ hasText: title });
  await expect(mail).toContainText('To client@example.org');
  await expect(mail).toContainText('Kept here');
  await mail.locator('summary').click();
  await expect(mail.locator('pre')).toContainText(copied);
  await expectAccessible(page);
  await screenshot(page, 'outbox');
});
