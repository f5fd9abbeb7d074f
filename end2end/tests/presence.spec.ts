import { expect, test } from '@playwright/test';
import { expectAccessible, hydrated, screenshot, signIn } from './helpers';

test('a user sets their presence in the top bar, and it stays set', async ({ page }) => {
  await signIn(page);
  await hydrated(page);
  const status = page.getByRole('group', { name: 'Your status' });
  await status.getByRole('button', { name: 'Online' }).click();
  await expect(status.getByRole('button', { name: 'Online' })).toHaveAttribute('aria-pressed', 'true');
  await expect(status.getByRole('button', { name: 'Away' })).toHaveAttribute('aria-pressed', 'false');
  await expectAccessible(page);
  await screenshot(page, 'presence');

  await page.reload();
  await expect(page.getByRole('group', { name: 'Your status' }).getByRole('button', { name: 'Online' })).toHaveAttribute(
    'aria-pressed',
    'true',
  );
  await hydrated(page);
  await page.getByRole('group', { name: 'Your status' }).getByRole('button', { name: 'Away' }).click();
  await expect(page.getByRole('group', { name: 'Your status' }).getByRole('button', { name: 'Away' })).toHaveAttribute(
    'aria-pressed',
    'true',
  );
});
