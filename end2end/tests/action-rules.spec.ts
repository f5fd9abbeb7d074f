// Action rules, in the order an admin and a visitor meet them: the admin
// builds a rule in Settings that opens the chat on a page after a few seconds;
// a visitor on that page sees the proactive message, answers it, and both land
// in the conversation; a page event hides the chat button; the rule report
// counts the matches; and the rules go out and back in as JSON.
//
// Every rule here names a page address of its own (`?rule=<stamp>`), so the
// other specs' visitors on the demo shop never meet them; each is deleted at
// the end.
import { expect, test } from '@playwright/test';
import { expectAccessible, hydrated, openSettings, signIn } from './helpers';
import { connectShop, demoUrl, dialog, launcher, log, openDemo, shop, visitor } from './shop';

test.beforeAll(async ({ browser }) => connectShop(browser));

test('an admin builds an action rule, and a visitor answers its proactive message', async ({ browser, page: admin, request }) => {
  test.setTimeout(120_000);
  const stamp = Date.now();
  const greeting = `Looking for something in particular? ${stamp}`;
  const name = `Products help ${stamp}`;

  // The admin builds it: on the products page, after 2 s, open the chat.
  await signIn(admin);
  await openSettings(admin, 'Action rules');
  await expect(admin.getByRole('heading', { name: 'Action rules', level: 1 })).toBeVisible();
  await admin.getByRole('link', { name: 'New action rule' }).click();
  await hydrated(admin);
  await admin.locator('#r-name').fill(name);
  await admin.getByLabel('Runs').selectOption('PAGE');
  await admin.getByRole('button', { name: 'Add a condition' }).click();
  await admin.getByLabel('Condition 1', { exact: true }).selectOption('URL');
  await admin.locator('#r-condition-0-list').fill(`${demoUrl}/products.html?rule=${stamp}*`);
  await admin.getByRole('button', { name: 'Add a condition' }).click();
  await admin.getByLabel('Condition 2', { exact: true }).selectOption('TIME_ON_PAGE');
  await admin.locator('#r-condition-1-seconds').fill('2');
  // A third: "not all agents offline", then taken out again.
  await admin.getByRole('button', { name: 'Add a condition' }).click();
  await admin.getByLabel('Condition 3', { exact: true }).selectOption('AGENTS_OFFLINE');
  await admin.locator('#r-condition-2-negate').check();
  await admin.getByRole('button', { name: 'Remove condition 3' }).click();
  await admin.getByLabel('Action', { exact: true }).selectOption('OPEN_CHAT');
  // Saved without its message: the problem shows, and what was typed stays.
  await admin.getByRole('button', { name: 'Save action rule' }).click();
  await expect(admin.getByRole('alert').filter({ hasText: /message/ }).first()).toBeVisible();
  await expect(admin.locator('#r-name')).toHaveValue(name);
  await admin.getByLabel('Message').fill(greeting);
  await expectAccessible(admin);
  await admin.getByRole('button', { name: 'Save action rule' }).click();
  await expect(admin).toHaveURL(/\/settings\/action-rules\/[0-9a-f-]{36}$/);
  await expect(admin.getByRole('heading', { name, level: 1 })).toBeVisible();
  const ruleId = admin.url().split('/').pop()!;
  const stored = await (await request.get(`/rest/v1/rule/action/${ruleId}`, { headers: shop.auth })).json();
  expect(stored.trigger).toBe('PAGE');
  expect(stored.conditions).toEqual([
    { type: 'URL', urls: [`${demoUrl}/products.html?rule=${stamp}*`], negate: false },
    { type: 'TIME_ON_PAGE', seconds: 2, negate: false },
  ]);
  expect(stored.action).toEqual({ type: 'OPEN_CHAT', message: greeting });

  // A second rule, over REST: the page's event hides the chat button.
  const hide = await request.post('/rest/v1/rule/action', {
    headers: shop.auth,
    data: {
      name: `Hide on checkout ${stamp}`,
      trigger: 'PAGE',
      conditions: [
        { type: 'URL', urls: [`${demoUrl}/products.html?rule=${stamp}*`] },
        { type: 'JS_EVENT', name: `checkout-${stamp}` },
      ],
      action: { type: 'HIDE_BUTTON' },
    },
  });
  expect(hide.status()).toBe(201);
  const hideId = (await hide.json()).id;

  // A visitor elsewhere in the shop is left alone.
  const { context, page, errors } = await visitor(browser);
  await openDemo(page);
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  await page.waitForTimeout(3000);
  await expect(dialog(page)).toBeHidden();

  // On the products page, after 2 s, the chat opens with the greeting, which
  // is not in the conversation yet.
  await page.goto(`${demoUrl}/products.html?rule=${stamp}`);
  await expect(dialog(page)).toBeVisible({ timeout: 15_000 });
  const proactive = log(page).locator('.proactive', { hasText: greeting });
  await expect(proactive).toBeVisible();
  const customerBefore = await page.evaluate((key) => {
    const stored = JSON.parse(localStorage.getItem(`rapport:${key}:visitor`) || 'null');
    return stored?.customerId ?? null;
  }, shop.widgetKey);
  expect(customerBefore).toBeNull();

  // The visitor answers: the greeting and the answer join the conversation, in order.
  await dialog(page).getByRole('textbox', { name: 'Your message' }).fill('Yes, a blue teapot');
  await dialog(page).getByRole('button', { name: 'Send' }).click();
  await expect(log(page).locator('.msg', { hasText: 'Yes, a blue teapot' })).not.toContainText('Sending');
  const customerId = await page.evaluate((key) => {
    return JSON.parse(localStorage.getItem(`rapport:${key}:visitor`) || 'null')?.customerId;
  }, shop.widgetKey);
  expect(customerId).toBeTruthy();
  const thread = await (
    await request.get(`/rest/v1/customer/${customerId}/message`, { headers: shop.auth })
  ).json();
  const said = thread.results.reverse().map((m: any) => [m.direction, m.channel, m.message]);
  expect(said).toEqual([
    ['OUTBOUND', 'AUTOMATION', greeting],
    ['INBOUND', 'WIDGET', 'Yes, a blue teapot'],
  ]);
  // Shown once: the stored greeting replaced the local one.
  await expect(log(page).getByText(greeting)).toHaveCount(1);

  // The page fires its event: the chat button goes, the open chat stays.
  await page.evaluate((name) => (window as any).Rapport('event', name), `checkout-${stamp}`);
  await expect(launcher(page)).toBeHidden();
  await expect(dialog(page)).toBeVisible();

  // Leaving sends the tracking batch; the rule report counts both rules' matches.
  await page.goto(`${demoUrl}/index.html`);
  await context.close();
  expect(errors).toEqual([]);
  const count = async (ids: string[]) => {
    const report = await request.post('/rest/v1/report/rule/', {
      headers: shop.auth,
      data: {
        metrics: [{ metricName: 'ACTION_RULE_MATCH_COUNT', ruleIds: ids }],
        dateFilter: { grouping: 'TODAY', timeZone: 'UTC' },
      },
    });
    const body = await report.json();
    return Object.values(body.results as Record<string, Record<string, string>>).reduce(
      (sum, b) => sum + Number(b.ACTION_RULE_MATCH_COUNT),
      0,
    );
  };
  await expect.poll(() => count([ruleId]), { timeout: 20_000 }).toBe(1);
  await expect.poll(() => count([hideId]), { timeout: 20_000 }).toBe(1);

  // The list shows both, with their matches; the export holds them.
  await openSettings(admin, 'Action rules');
  const row = admin.getByRole('row', { name: new RegExp(name) });
  await expect(row).toContainText('When a page opens → Open the chat with a message');
  await expect(row.getByRole('cell').last()).toHaveText('1');
  await admin.getByText('Export', { exact: true }).click();
  await expect(admin.locator('#action-rules-export')).toContainText(greeting);
  await expectAccessible(admin);

  // Import: a bad document is refused whole; a good one adds its rule.
  await admin.locator('#action-rules-import').fill(JSON.stringify({ rules: [{ name: `Imported ${stamp}` }] }));
  await admin.getByRole('button', { name: 'Import' }).click();
  await expect(admin.getByRole('alert').filter({ hasText: /trigger/ }).first()).toBeVisible();
  const imported = {
    rules: [{ name: `Imported ${stamp}`, trigger: 'CHAT', active: false, action: { type: 'SHOW_OFFLINE_FORM' } }],
  };
  await admin.locator('#action-rules-import').fill(JSON.stringify(imported));
  await admin.getByRole('button', { name: 'Import' }).click();
  await expect(admin.getByRole('status').filter({ hasText: 'Imported 1 rule.' })).toBeVisible();
  await expect(admin.getByRole('row', { name: new RegExp(`Imported ${stamp}`) })).toContainText(
    'When the visitor opens the chat → Show the offline form',
  );

  // Clean up, so that no other visitor meets these rules.
  const all = await (await request.get('/rest/v1/rule/action?pageSize=200', { headers: shop.auth })).json();
  for (const rule of all.results.filter((r: any) => String(r.name).includes(String(stamp)))) {
    expect((await request.delete(`/rest/v1/rule/action/${rule.id}`, { headers: shop.auth })).status()).toBe(204);
  }
});

test('rules open the chat with a flow, on the offline form, or offering a call', async ({ browser, request }) => {
  test.setTimeout(90_000);
  const stamp = Date.now();
  const page_ = (which: string) => `${demoUrl}/products.html?rule=${stamp}-${which}`;
  const create = async (data: object) => {
    const created = await request.post('/rest/v1/rule/action', { headers: shop.auth, data });
    expect(created.status()).toBe(201);
    return (await created.json()).id as string;
  };
  const flow = await request.post('/rest/v1/flow', {
    headers: shop.auth,
    data: {
      name: `Welcome ${stamp}`,
      messages: [
        { type: 'MESSAGE', message: `Welcome to the shop ${stamp}` },
        { type: 'CARD', message: 'Our teapot guide', buttonText: 'Read the guide', buttonLink: 'https://help.example.com/teapots' },
      ],
    },
  });
  expect(flow.status()).toBe(201);
  const flowId = (await flow.json()).id;
  const ids = [
    await create({
      name: `Flow on open ${stamp}`,
      trigger: 'CHAT',
      conditions: [{ type: 'URL', urls: [page_('flow')] }],
      action: { type: 'OPEN_CHAT', flowId },
    }),
    await create({
      name: `Offline form ${stamp}`,
      trigger: 'CHAT',
      conditions: [{ type: 'URL', urls: [page_('offline')] }],
      action: { type: 'SHOW_OFFLINE_FORM' },
    }),
    await create({
      name: `Call offer ${stamp}`,
      trigger: 'PAGE',
      conditions: [{ type: 'URL', urls: [page_('call')] }, { type: 'TIME_ON_PAGE', seconds: 1 }],
      action: { type: 'OFFER_CALL' },
    }),
  ];

  // A CHAT rule: opening the chat shows the flow, card and all, not yet stored.
  const { context, page, errors } = await visitor(browser);
  await page.goto(page_('flow'));
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  await expect(dialog(page)).toBeHidden();
  await launcher(page).click();
  await expect(log(page).locator('.proactive', { hasText: `Welcome to the shop ${stamp}` })).toBeVisible();
  await expect(log(page).locator('.proactive').getByRole('link', { name: 'Read the guide' })).toBeVisible();
  await dialog(page).getByRole('textbox', { name: 'Your message' }).fill('Which teapot keeps tea warm?');
  await dialog(page).getByRole('button', { name: 'Send' }).click();
  await expect(log(page).locator('.msg', { hasText: 'Which teapot keeps tea warm?' })).not.toContainText('Sending');
  const customerId = await page.evaluate(
    (key) => JSON.parse(localStorage.getItem(`rapport:${key}:visitor`) || 'null')?.customerId,
    shop.widgetKey,
  );
  const thread = await (await request.get(`/rest/v1/customer/${customerId}/message`, { headers: shop.auth })).json();
  expect(thread.results.reverse().map((m: any) => m.message)).toEqual([
    `Welcome to the shop ${stamp}`,
    'Our teapot guide',
    'Which teapot keeps tea warm?',
  ]);

  // On that page, opening the chat shows the offline form, although the workspace is open.
  await page.goto(page_('offline'));
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  await launcher(page).click();
  await expect(dialog(page).getByRole('heading', { name: 'We are away right now' })).toBeVisible();
  await expect(dialog(page).getByRole('textbox', { name: 'Your message' })).toBeHidden();

  // A page rule offers a call after a second, with the widget's own words and button.
  await page.goto(page_('call'));
  const offer = log(page).locator('.offer');
  await expect(offer).toContainText('Would you like to talk face to face?', { timeout: 15_000 });
  await expect(offer.getByRole('button', { name: 'Start a video call' })).toBeVisible();
  expect(errors).toEqual([]);
  await context.close();

  for (const id of ids) {
    expect((await request.delete(`/rest/v1/rule/action/${id}`, { headers: shop.auth })).status()).toBe(204);
  }
  expect((await request.delete(`/rest/v1/flow/${flowId}`, { headers: shop.auth })).status()).toBe(204);
});
