import { expect, test } from '@playwright/test';
import { createApiKey, expectAccessible, hydrated, screenshot, signIn } from './helpers';

// A customer message arrives; a routing rule sends it to the right agent, who sees it
// and why it came; nobody answers, the SLA deadline passes, and the agent's
// notification appears without a reload.
test('a rule routes a message to an agent, who sees why, and a missed SLA notifies them', async ({
  browser,
  page,
  request,
}) => {
  test.setTimeout(120_000);
  await signIn(page);
  const token = await createApiKey(page);
  const auth = { Authorization: `Bearer ${token}` };
  const stamp = Date.now();

  // Two agents; the rule names Grace.
  const password = 'e2e-agent-password';
  const agents: Record<string, string> = {};
  for (const name of ['Grace', 'Alan']) {
    const created = await request.post('/rest/v1/user', {
      headers: auth,
      data: { email: `${name.toLowerCase()}.${stamp}@example.com`, displayName: `${name} ${stamp}`, roleId: 'AGENT', password },
    });
    expect(created.status()).toBe(201);
    agents[name] = (await created.json()).id;
  }
  const externalId = `vip-${stamp}`;
  const ruleName = `VIP to Grace ${stamp}`;
  const rule = await request.post('/rest/v1/rule/routing', {
    headers: auth,
    data: {
      name: ruleName,
      priority: 0,
      types: ['CHAT'],
      conditions: [{ type: 'HAS_ID', ids: [externalId] }],
      actions: [{ type: 'QUEUE', target: { type: 'USER', value: agents.Grace }, agentState: 'ONLINE', maxWaitSeconds: 600 }],
    },
  });
  expect(rule.status()).toBe(201);
  const slaName = `VIP answer ${stamp}`;
  const sla = await request.post('/rest/v1/rule/sla', {
    headers: auth,
    data: {
      name: slaName,
      conditions: [{ type: 'HAS_ID', ids: [externalId] }],
      trigger: { firstResponseSeconds: 8, secondResponseSeconds: 60 },
    },
  });
  expect(sla.status()).toBe(201);

  // Grace signs in and goes online.
  const context = await browser.newContext();
  const grace = await context.newPage();
  await signIn(grace, `grace.${stamp}@example.com`, password);
  await hydrated(grace);
  const status = grace.getByRole('group', { name: 'Your status' });
  await status.getByRole('button', { name: 'Online' }).click();
  await expect(status.getByRole('button', { name: 'Online' })).toHaveAttribute('aria-pressed', 'true');
  await grace.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Inbox' }).click();
  await hydrated(grace);
  await expect(grace.getByRole('status').filter({ hasText: 'Live' })).toBeVisible();

  // The customer writes.
  const inbound = await request.post('/rest/v1/message/inbound', {
    headers: auth,
    data: { customerId: externalId, isExternalId: true, type: 'MESSAGE', message: 'My order never arrived.' },
  });
  expect(inbound.status()).toBe(201);
  const customerId = (await inbound.json()).customerId as string;
  const customer = await request.get(`/rest/v1/customer/${customerId}`, { headers: auth });
  expect((await customer.json()).assignedUser).toBe(agents.Grace);

  // Grace sees it live, with its SLA counting down, and why it came to her.
  const row = grace.getByRole('link', { name: new RegExp(externalId) });
  await expect(row).toBeVisible();
  await expect(row.getByRole('timer')).toContainText('SLA');
  await row.click();
  await expect(grace.getByRole('list', { name: 'Messages' }).getByText('My order never arrived.')).toBeVisible();
  await expect(grace.locator('.routing-why .routed')).toContainText(`Routed by rule ${ruleName}`);
  await expect(grace.locator('.routing-why .routed')).toContainText('new conversation');
  await grace.getByText(/Routing history/).click();
  await expect(grace.locator('.routing-history')).toContainText('matched');

  // Nobody answers in 8 seconds: the miss reaches Grace's bell, live.
  await expect(grace.getByRole('status').filter({ hasText: '1 unread notification' })).toBeAttached({ timeout: 30_000 });
  await expectAccessible(grace);
  await screenshot(grace, 'routing-why');
  await grace.locator('a.bell').click();
  await expect(grace.getByRole('heading', { name: 'Notifications', level: 1 })).toBeVisible();
  await expect(grace.getByText(`SLA missed: ${slaName}`)).toBeVisible();

  // The rule's page lists the match, and the rule report counts it.
  const matches = await request.get(`/rest/v1/rule/routing/${(await rule.json()).id}/match`, { headers: auth });
  expect(matches.status()).toBe(200);
  const decisions = await matches.json();
  expect(decisions[0].customerId).toBe(customerId);
  expect(decisions[0].result).toBe('ASSIGNED');

  // Leave the shared workspace as it was for the specs that follow.
  await request.delete(`/rest/v1/rule/routing/${(await rule.json()).id}`, { headers: auth });
  await request.delete(`/rest/v1/rule/sla/${(await sla.json()).id}`, { headers: auth });
  await context.close();
});
