import { expect, test } from '@playwright/test';
import { expectAccessible, hydrated, openSettings, screenshot, signIn } from './helpers';

test('an admin creates an API key, uses it, and revokes it', async ({ page, request }) => {
  await signIn(page);
  await openSettings(page, 'API keys');
  await expect(page.getByRole('heading', { name: 'API keys' })).toBeVisible();
  await hydrated(page);

  const name = `CRM sync ${Date.now()}`;
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = page.locator('.secret .copy-value');
  await expect(secret).toBeVisible();
  const token = await secret.inputValue();
  expect(token).toMatch(/^rpt_/);
  await expect(page.getByRole('row', { name: new RegExp(name) })).toContainText('Active');
  await expectAccessible(page);
  await screenshot(page, 'api-keys');

  // The key works against the REST API, in both placements.
  expect((await request.get('/rest/v1/apikey', { headers: { Authorization: `Bearer ${token}` } })).status()).toBe(200);
  expect((await request.get(`/rest/v1/apikey?access_token=${token}`)).status()).toBe(200);

  await page.getByRole('button', { name: `Revoke ${name}` }).click();
  await expect(page.getByRole('row', { name: new RegExp(name) })).toContainText('Revoked');

  const after = await request.get('/rest/v1/apikey', { headers: { Authorization: `Bearer ${token}` } });
  expect(after.status()).toBe(401);
  expect(after.headers()['content-type']).toContain('application/problem+json');
  expect((await after.json()).code).toBe('invalid_token');
});

test('a platform admin creates a tenant whose admin can sign in', async ({ page, browser }) => {
  await signIn(page);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tenants' }).click();
  await hydrated(page);
  const slug = `e2e-${Date.now()}`;
  await page.getByLabel('Name').fill('E2E Workspace');
  await page.getByLabel('Slug').fill(slug);
  await page.getByLabel('Time zone').fill('Europe/Berlin');
  await page.getByLabel("First admin's e-mail").fill(`boss@${slug}.test`);
  await page.getByRole('button', { name: 'Create tenant' }).click();
  await expect(page.getByText(`(slug ${slug})`)).toBeVisible();
  const password = await page.locator('.secret .copy-value').inputValue();
  await expect(page.getByRole('cell', { name: slug, exact: true })).toBeVisible();
  await expectAccessible(page);
  await screenshot(page, 'tenants');

  const other = await browser.newContext();
  const newAdmin = await other.newPage();
  await signIn(newAdmin, `boss@${slug}.test`, password);
  await expect(newAdmin.getByText('You are signed in to E2E Workspace')).toBeVisible();
  // A tenant admin is not a platform admin.
  await expect(newAdmin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tenants' })).toHaveCount(0);
  await newAdmin.goto('/platform/tenants');
  await expect(newAdmin.getByRole('heading', { name: 'Not available to your role' })).toBeVisible();
  await other.close();

  // Edit it: a bad zone is refused at its field, then a rename is saved.
  await page.getByLabel('Find a tenant').fill(slug);
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(page.getByRole('row')).toHaveCount(2);
  await page.getByRole('link', { name: 'E2E Workspace' }).click();
  await expect(page.getByRole('heading', { name: 'E2E Workspace', level: 1 })).toBeVisible();
  await hydrated(page);
  await page.getByLabel('Time zone').fill('Mars/Olympus');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.locator('#edit-tenant-timezone-error')).toBeVisible();
  await page.getByLabel('Time zone').fill('America/New_York');
  await page.getByLabel('Name').fill('E2E Renamed');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'E2E Renamed', level: 1 })).toBeVisible();
  await expectAccessible(page);
  await screenshot(page, 'tenant');
  await page.getByText('Delete this tenant…').click();
  await page.getByRole('button', { name: 'Delete permanently' }).click();
  await expect(page).toHaveURL(/\/platform\/tenants$/);
  await expect(page.getByRole('link', { name: 'E2E Renamed' })).toHaveCount(0);
});
