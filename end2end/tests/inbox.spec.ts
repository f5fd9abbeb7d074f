import { expect, test } from '@playwright/test';
import { createApiKey, expectAccessible, hydrated, screenshot, signIn } from './helpers';

test('an agent receives a message live and replies', async ({ page, request }) => {
  test.setTimeout(90_000);
  await signIn(page);
  const token = await createApiKey(page);
  const auth = { Authorization: `Bearer ${token}` };
  const name = `Ines ${Date.now()}`;
  const created = await request.post('/rest/v1/customer', {
    headers: auth,
    data: { firstName: name, email: 'ines@example.com' },
  });
  expect(created.status()).toBe(201);
  const customerId = (await created.json()).id as string;
  const inbound = async (message: string) => {
    const sent = await request.post('/rest/v1/message/inbound', {
      headers: auth,
      data: { customerId, isExternalId: false, type: 'MESSAGE', message },
    });
    expect(sent.status()).toBe(201);
  };

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Inbox' }).click();
  await expect(page.getByRole('heading', { name: 'Inbox', level: 1 })).toBeVisible();
  await hydrated(page);
  await expect(page.getByRole('status').filter({ hasText: 'Live' })).toBeVisible();

  // The customer writes: the conversation appears without a reload.
  await inbound('Hello, is my order on its way?');
  const row = page.getByRole('link', { name: new RegExp(name) });
  await expect(row).toBeVisible();
  await expect(row.getByLabel('1 waiting')).toBeVisible();
  await row.click();
  await expect(page.getByRole('heading', { name, level: 2 })).toBeVisible();
  const thread = page.getByRole('list', { name: 'Messages' });
  await expect(thread.getByText('Hello, is my order on its way?')).toBeVisible();

  // A second message arrives in the open thread, live.
  await inbound('Order 1042, by the way.');
  await expect(thread.getByText('Order 1042, by the way.')).toBeVisible();
  await expect(page.getByRole('link', { name: new RegExp(name) }).getByLabel('2 waiting')).toBeVisible();

  // Reply: the message goes out, the box empties, the conversation is answered.
  await page.getByLabel('Reply').fill('It ships today. Tracking follows by e-mail.');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await expect(thread.getByText('It ships today. Tracking follows by e-mail.')).toBeVisible();
  await expect(page.getByLabel('Reply')).toHaveValue('');
  await expect(page.locator('.thread-head .badge')).toHaveText('UNRESOLVED');
  const history = await request.get(`/rest/v1/customer/${customerId}/message`, { headers: auth });
  const messages = (await history.json()).results;
  expect(messages[0].message).toBe('It ships today. Tracking follows by e-mail.');
  expect(messages[0].channel).toBe('DASHBOARD');

  // Assign to me, then close it.
  await page.getByRole('button', { name: 'Assign to me' }).click();
  await expect(page.getByRole('button', { name: 'Assign to me' })).toHaveCount(0);
  await expect(page.getByLabel('Assigned to')).not.toHaveValue('');
  await expectAccessible(page);
  await screenshot(page, 'inbox');
  await page.getByRole('button', { name: 'Mark done' }).click();
  await expect(page.locator('.thread-head .badge')).toHaveText('DONE');
  await page.getByRole('link', { name: /^Done/ }).click();
  await expect(page.getByRole('link', { name: new RegExp(name) })).toBeVisible();

  // While the stream is down the page says so, and catches up when it is back.
  await page.getByRole('link', { name: new RegExp(name) }).click();
  await expect(page.getByRole('heading', { name, level: 2 })).toBeVisible();
  await page.route('**/inbox/events', (route) => route.abort('connectionreset'));
  await page.reload();
  await expect(page.getByRole('status').filter({ hasText: 'Disconnected' })).toBeVisible({ timeout: 15_000 });
  await inbound('Anyone there?');
  await page.unroute('**/inbox/events');
  await expect(page.getByRole('status').filter({ hasText: 'Live' })).toBeVisible({ timeout: 20_000 });
  // What arrived meanwhile is shown once the stream is back.
  await expect(page.getByRole('list', { name: 'Messages' }).getByText('Anyone there?')).toBeVisible();
});

test('the inbox fits a phone: the list, then the thread with a way back', async ({ page, request }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page);
  const token = await createApiKey(page);
  const name = `Phone ${Date.now()}`;
  const created = await request.post('/rest/v1/customer', {
    headers: { Authorization: `Bearer ${token}` },
    data: { firstName: name },
  });
  const customerId = (await created.json()).id as string;
  await request.post('/rest/v1/message/inbound', {
    headers: { Authorization: `Bearer ${token}` },
    data: { customerId, isExternalId: false, type: 'MESSAGE', message: 'Hi from a phone' },
  });
  await page.goto('/inbox');
  await page.getByRole('link', { name: new RegExp(name) }).click();
  await expect(page.getByRole('list', { name: 'Messages' }).getByText('Hi from a phone')).toBeVisible();
  await expect(page.getByRole('link', { name: new RegExp(name) })).toBeHidden();
  await screenshot(page, 'inbox-phone');
  await page.getByRole('link', { name: '← All conversations' }).click();
  await expect(page.getByRole('link', { name: new RegExp(name) })).toBeVisible();
});
