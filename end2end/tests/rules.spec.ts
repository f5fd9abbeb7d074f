import { expect, test } from '@playwright/test';
import { createApiKey, expectAccessible, hydrated, openSettings, screenshot, signIn } from './helpers';

test('an admin builds a routing rule with an else-branch', async ({ page, request }) => {
  test.setTimeout(90_000);
  await signIn(page);
  // What the rule refers to: a team and a system message.
  const token = await createApiKey(page);
  const auth = { Authorization: `Bearer ${token}` };
  const stamp = Date.now();
  const team = await request.post('/rest/v1/team', { headers: auth, data: { name: `VIP desk ${stamp}` } });
  expect(team.status()).toBe(201);
  const message = await request.post('/rest/v1/systemmessage', {
    headers: auth,
    data: { language: 'en', message: `All agents are busy ${stamp}` },
  });
  expect(message.ok()).toBeTruthy();

  await openSettings(page, 'Routing rules');
  await expect(page.getByRole('heading', { name: 'Routing rules', level: 1 })).toBeVisible();
  await page.getByRole('link', { name: 'New routing rule' }).click();
  await expect(page.getByRole('heading', { name: 'New routing rule', level: 1 })).toBeVisible();
  await hydrated(page);
  const name = `VIP customers ${stamp}`;
  const rule = page.getByRole('group', { name: 'Rule', exact: true });
  await rule.getByLabel('Name').first().fill(name);

  // Condition: the customer carries the tag vip.
  await page.getByRole('button', { name: 'Add a condition' }).click();
  await page.getByLabel('Condition 1', { exact: true }).selectOption('HAS_TAG');
  await page.locator('#r-condition-0-list').fill('vip');
  // Action: queue for the team.
  await page.getByRole('button', { name: 'Add an action' }).first().click();
  await page.locator('#r-action-0-target-kind').selectOption('TEAM');
  await page.locator('#r-action-0-target').selectOption({ label: `VIP desk ${stamp}` });

  // Else-branch: everyone else gets the system message.
  await page.getByRole('button', { name: 'Add an else-rule' }).first().click();
  const otherwise = page.getByRole('group', { name: 'Else-rule 1', exact: true });
  await expect(otherwise).toBeVisible();
  await otherwise.locator('#r-0-name').fill('Everyone else');
  await otherwise.getByRole('button', { name: 'Add an action' }).first().click();
  await page.locator('#r-0-action-0-type').selectOption('SYSTEM_MESSAGE');
  // Saved without picking the message: the problem shows inside the else-rule.
  await page.getByRole('button', { name: 'Save routing rule' }).click();
  await expect(otherwise.getByRole('alert').first()).toBeVisible();
  await expect(rule.getByLabel('Name').first()).toHaveValue(name);
  await page.locator('#r-0-action-0-reference').selectOption({ label: `[en] All agents are busy ${stamp}` });
  await expectAccessible(page);
  await screenshot(page, 'routing-rule-builder');
  await page.getByRole('button', { name: 'Save routing rule' }).click();

  // Saved: the rule has its own address and reads back as built.
  await expect(page).toHaveURL(/\/settings\/routing-rules\/[0-9a-f-]{36}$/);
  await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
  await expect(page.getByText('Matched 0 times over the last month.')).toBeVisible();
  const id = page.url().split('/').pop()!;
  const stored = await request.get(`/rest/v1/rule/routing/${id}`, { headers: auth });
  const body = await stored.json();
  expect(body.conditions).toEqual([{ type: 'HAS_TAG', tags: ['vip'], match: 'ANY' }]);
  expect(body.actions[0].target.type).toBe('TEAM');
  expect(body.elseRules[0].name).toBe('Everyone else');
  expect(body.elseRules[0].actions[0].type).toBe('SYSTEM_MESSAGE');

  await page.reload();
  await hydrated(page);
  await expect(page.locator('#r-0-name')).toHaveValue('Everyone else');
  await expect(page.locator('#r-condition-0-list')).toHaveValue('vip');

  await page.getByRole('link', { name: 'Settings › Routing rules' }).click();
  const row = page.getByRole('row', { name: new RegExp(name) });
  await expect(row).toContainText('1 else-rule(s)');
  await expect(row.getByRole('cell').last()).toHaveText('0');
  await expectAccessible(page);
  await screenshot(page, 'routing-rules');
});

test('without JavaScript a routing rule is written as JSON', async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await signIn(page);
  await page.goto('/settings/routing-rules/new');
  const json = page.getByLabel("The rule as JSON, in the REST API's shape");
  await expect(json).toBeVisible();
  const name = `Plain ${Date.now()}`;
  await json.fill(JSON.stringify({ name, types: ['CHAT'], actions: [{ type: 'QUEUE', target: { type: 'TAG', value: 'support' } }] }));
  await page.getByRole('button', { name: 'Save routing rule' }).click();
  await expect(page).toHaveURL(/\/settings\/routing-rules\/[0-9a-f-]{36}$/);
  await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
  await context.close();
});

test('an admin sets an SLA rule with a receiver', async ({ page }) => {
  await signIn(page);
  await openSettings(page, 'SLA rules');
  await page.getByRole('link', { name: 'New SLA rule' }).click();
  await hydrated(page);
  const name = `VIP response ${Date.now()}`;
  await page.locator('#r-name').fill(name);
  await page.getByRole('button', { name: 'Add a condition' }).click();
  await page.locator('#r-condition-0-list').fill('vip');
  await page.getByLabel('First answer within (seconds)').fill('700000');
  await page.getByRole('button', { name: 'Add a receiver' }).click();
  await page.getByLabel('Receiver 1', { exact: true }).fill('lead@example.com');
  await page.getByRole('button', { name: 'Save SLA rule' }).click();
  // Out of range: the problem shows at the field, nothing typed is lost.
  await expect(page.getByRole('group', { name: 'Response times' }).getByRole('alert')).toBeVisible();
  await expect(page.getByLabel('Receiver 1', { exact: true })).toHaveValue('lead@example.com');
  await page.getByLabel('First answer within (seconds)').fill('120');
  await page.getByRole('button', { name: 'Save SLA rule' }).click();
  await expect(page).toHaveURL(/\/settings\/sla-rules\/[0-9a-f-]{36}$/);
  await expect(page.getByRole('heading', { name, level: 1 })).toBeVisible();
  await expectAccessible(page);
  await screenshot(page, 'sla-rule');
  await page.getByRole('link', { name: 'Settings › SLA rules' }).click();
  await expect(page.getByRole('row', { name: new RegExp(name) })).toContainText('first answer 120 s, then 300 s');
});
