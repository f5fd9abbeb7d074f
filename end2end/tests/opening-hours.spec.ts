import { expect, test } from '@playwright/test';
import { expectAccessible, hydrated, openSettings, screenshot, signIn } from './helpers';

test('an admin builds a week of opening hours with a split day and a holiday', async ({ page }) => {
  await signIn(page);
  await openSettings(page, 'Opening hours');
  await expect(page.getByRole('heading', { name: 'Opening hours', level: 1 })).toBeVisible();
  await page.getByRole('link', { name: 'New opening hours' }).click();
  await expect(page.getByRole('heading', { name: 'New opening hours', level: 1 })).toBeVisible();
  await hydrated(page);

  const name = `Support desk ${Date.now()}`;
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Time zone').fill('Europe/Berlin');
  await page.getByLabel('Monday, another interval: opens').fill('09:00');
  await page.getByLabel('Monday, another interval: closes').fill('12:00');
  await page.getByLabel('Saturday, another interval: opens').fill('10:00');
  await page.getByLabel('Saturday, another interval: closes').fill('14:00');
  await page.getByRole('button', { name: 'Save opening hours' }).click();

  // Saved: the editor now shows the object, and Monday has a new empty slot.
  await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
  await expect(page.getByLabel('Monday, interval 09:00: opens')).toHaveValue('09:00');
  await hydrated(page);

  // A second interval on Monday; an end before its start is refused at its row.
  await page.getByLabel('Monday, another interval: opens').fill('17:00');
  await page.getByLabel('Monday, another interval: closes').fill('13:00');
  await page.getByRole('button', { name: 'Save opening hours' }).click();
  await expect(page.getByLabel('Monday, another interval: closes')).toHaveAttribute('aria-invalid', 'true');
  await expect(page.locator('.interval .field-error')).toContainText('endHours must be after startHours');
  await page.getByLabel('Monday, another interval: opens').fill('13:00');
  await page.getByLabel('Monday, another interval: closes').fill('17:00');
  await page.getByLabel('New holiday: name').fill('Christmas');
  await page.getByLabel('New holiday: first day').fill('2026-12-24');
  await page.getByLabel('New holiday: last day').fill('2026-12-26');
  await page.getByRole('button', { name: 'Save opening hours' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await expectAccessible(page);
  await screenshot(page, 'opening-hours');

  // After a reload everything is there, and the list sums it up.
  await page.reload();
  await expect(page.getByLabel('Monday, interval 13:00: closes')).toHaveValue('17:00');
  await expect(page.getByLabel('Holiday 1: name')).toHaveValue('Christmas');
  await page.goto('/settings/opening-hours');
  await expect(page.getByRole('row', { name: new RegExp(name) })).toContainText('Mon 09:00–12:00, 13:00–17:00 · Sat 10:00–14:00');
});
