// The agent's desk, in the order a team meets it: an admin writes text blocks
// under Settings (one answer in two languages); a German-speaking customer
// writes in; the agent types "/" and the shortcut, and the German text, filled
// in for this customer, takes the place of the draft; the reply counts a use;
// a flow goes out from the same picker; and a private note naming a colleague
// reaches that colleague's bell, live, while the conversation stays unanswered;
// and the admin downloads everything held about the customer.
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { createApiKey, expectAccessible, hydrated, openSettings, screenshot, signIn } from './helpers';

test('text blocks, a flow by hand, and a private note that tells a colleague', async ({ browser, page, request }) => {
  test.setTimeout(150_000);
  const stamp = Date.now();
  const shortcut = `thanks${stamp}`;
  await signIn(page);
  const token = await createApiKey(page);
  const auth = { Authorization: `Bearer ${token}` };

  // The admin writes the answer in English, then in German, under Settings.
  await openSettings(page, 'Text blocks');
  await expect(page.getByRole('heading', { name: 'Text blocks', level: 1 })).toBeVisible();
  await hydrated(page);
  const add = async (language: string, text: string) => {
    await page.locator('#new-text-block-shortcut').fill(shortcut);
    await page.locator('#new-text-block-language').fill(language);
    await page.locator('#new-text-block-text').fill(text);
    await page.getByRole('button', { name: 'Add text block' }).click();
    await expect(page.getByRole('status').filter({ hasText: `Added /${shortcut}.` })).toBeVisible();
  };
  // A typo in a variable is refused at the text, and what was typed stays.
  await page.locator('#new-text-block-shortcut').fill(shortcut);
  await page.locator('#new-text-block-text').fill('Thanks {customer.first}!');
  await page.getByRole('button', { name: 'Add text block' }).click();
  await expect(page.locator('#new-text-block-text-error')).toContainText('not a variable');
  await expect(page.locator('#new-text-block-text')).toHaveValue('Thanks {customer.first}!');
  await add('en', 'Thanks {customer.firstName|there}, {agent.firstName} here. Anything else?');
  await add('de', 'Danke {customer.firstName|Ihnen}, hier ist {agent.displayName}. Noch etwas?');
  await page.locator('#shortcut-filter').fill(shortcut);
  await page.getByRole('button', { name: 'Filter' }).click();
  const table = page.getByRole('table');
  await expect(table.getByRole('row')).toHaveCount(3);
  await expect(table).toContainText('Danke {customer.firstName|Ihnen}');
  await expectAccessible(page);

  // A flow to send by hand, a colleague to mention, and a customer who speaks German.
  const flowName = `Returns ${stamp}`;
  const flow = await request.post('/rest/v1/flow', {
    headers: auth,
    data: { name: flowName, messages: [{ type: 'MESSAGE', message: `Returns are free for 30 days. ${stamp}` }] },
  });
  expect(flow.status()).toBe(201);
  const password = 'e2e-agent-password';
  const kimEmail = `kim.${stamp}@example.com`;
  const kim = await request.post('/rest/v1/user', {
    headers: auth,
    data: { email: kimEmail, displayName: `Kim ${stamp}`, roleId: 'AGENT', password },
  });
  expect(kim.status()).toBe(201);
  const name = `Eva ${stamp}`;
  const created = await request.post('/rest/v1/customer', { headers: auth, data: { firstName: name, language: 'de-CH' } });
  expect(created.status()).toBe(201);
  const customerId = (await created.json()).id as string;
  const inbound = await request.post('/rest/v1/message/inbound', {
    headers: auth,
    data: { customerId, isExternalId: false, type: 'MESSAGE', message: `Mein Paket ${stamp} ist angekommen.` },
  });
  expect(inbound.status()).toBe(201);

  // Kim is signed in elsewhere, with the bell in view.
  const context = await browser.newContext();
  const kimPage = await context.newPage();
  await signIn(kimPage, kimEmail, password);
  await hydrated(kimPage);
  await expect(kimPage.getByRole('status').filter({ hasText: 'No unread notifications' })).toBeAttached();

  // The agent opens the conversation. The picker's code (its own chunk,
  // `block_list`) is not part of the page: it comes as the agent starts a reply.
  const pickerCode = (url: string) => url.includes('block_list');
  const requested: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  await page.goto(`/inbox/${customerId}`);
  await hydrated(page);
  await expect(page.getByRole('heading', { name, level: 2 })).toBeVisible();
  expect(requested.filter(pickerCode)).toEqual([]);
  const reply = page.getByLabel('Reply');
  const pickerArrives = page.waitForRequest((r) => pickerCode(r.url()));
  await reply.focus();
  await pickerArrives;

  // The agent types "/" and the start of the shortcut.
  await reply.pressSequentially(`/${shortcut.slice(0, 8)}`);
  const choices = page.getByRole('listbox', { name: 'Text blocks' });
  const choice = choices.getByRole('option', { name: new RegExp(`/${shortcut}`) });
  await expect(choice).toBeVisible();
  await expect(choice).toContainText(`Danke ${name}, hier ist`);
  await expectAccessible(page);
  await reply.press('Enter');
  await expect(reply).toHaveValue(/^Danke Eva \d+, hier ist .+\. Noch etwas\?$/);
  await expect(choices).toBeHidden();
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  const thread = page.getByRole('list', { name: 'Messages' });
  await expect(thread.getByText(`Danke ${name}, hier ist`)).toBeVisible();
  await expect(reply).toHaveValue('');
  const blocks = await request.get(`/rest/v1/textblock?shortcut=${shortcut}&language=de`, { headers: auth });
  expect((await blocks.json()).results[0].uses).toBe(1);

  // The inbox's search finds the conversation by what the customer wrote.
  await page.getByLabel('Search conversations').fill(`paket ${stamp}`);
  await page.getByLabel('Search conversations').press('Enter');
  await expect(page.getByRole('heading', { name: 'Search', level: 1 })).toBeVisible();
  const results = page.getByRole('list', { name: 'Results' });
  await expect(results.getByRole('listitem')).toHaveCount(1);
  await expect(results.locator('mark').first()).toHaveText('Paket');
  await expectAccessible(page);
  await results.getByRole('link', { name: new RegExp(name) }).click();
  await expect(page.getByRole('heading', { name, level: 2 })).toBeVisible();
  await hydrated(page);

  // The picker's button lists every block and the flows; a flow goes out at once.
  await page.getByRole('button', { name: 'Text blocks' }).click();
  await expect(choices.getByRole('option', { name: new RegExp(`/${shortcut}`) })).toBeVisible();
  await page.getByRole('button', { name: `Send “${flowName}”` }).click();
  await expect(thread.getByText(`Returns are free for 30 days. ${stamp}`)).toBeVisible();

  // A private note naming Kim: it shows among the messages as private, Kim's
  // bell rings without a reload, and the customer is not answered by it.
  const status = await (await request.get(`/rest/v1/conversation/${customerId}`, { headers: auth })).json();
  await page.getByLabel('Private note').fill(`Customer asked twice about the parcel. @kim.${stamp} can you check the tracking?`);
  await page.getByRole('button', { name: 'Add note' }).click();
  const note = thread.locator('.note-entry').filter({ hasText: 'asked twice about the parcel' });
  await expect(note).toBeVisible();
  await expect(note.getByText('Private note')).toBeVisible();
  await expect(page.getByLabel('Private note')).toHaveValue('');
  await screenshot(page, 'agent-desk');
  await expect(kimPage.getByRole('status').filter({ hasText: '1 unread notification' })).toBeAttached({ timeout: 30_000 });
  await kimPage.locator('a.bell').click();
  await expect(kimPage.getByRole('heading', { name: 'Notifications', level: 1 })).toBeVisible();
  await expect(kimPage.getByText(/mentioned you/)).toBeVisible();
  await kimPage.getByRole('link', { name: /mentioned you/ }).first().click();
  await expect(kimPage).toHaveURL(new RegExp(`/inbox/${customerId}`));
  await expect(kimPage.locator('.note-entry.mentions-me')).toContainText('can you check the tracking?');
  const after = await (await request.get(`/rest/v1/conversation/${customerId}`, { headers: auth })).json();
  expect(after.status).toBe(status.status);
  const history = await (await request.get(`/rest/v1/customer/${customerId}/message?pageSize=50`, { headers: auth })).json();
  expect(JSON.stringify(history)).not.toContain('asked twice about the parcel');
  await context.close();

  // The admin downloads everything held about the customer, notes and all.
  await page.goto(`/inbox/${customerId}`);
  await hydrated(page);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export data' }).click()]);
  expect(download.suggestedFilename()).toBe(`customer-${customerId}.json`);
  const exported = JSON.parse(readFileSync(await download.path(), 'utf8'));
  expect(exported.customer.id).toBe(customerId);
  expect(JSON.stringify(exported.records.notes)).toContain('asked twice about the parcel');
  expect(exported.records.messages.length).toBeGreaterThanOrEqual(3);
});
