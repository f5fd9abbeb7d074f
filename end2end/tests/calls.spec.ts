// Video calls with a customer, started from a conversation (issue 24): an agent
// calls a visitor from the inbox, and a visitor asks for a call from the chat,
// which a CALL routing rule gives to an agent, who is notified and admits them.
// The visitor is on the demo shop (DEMO_URL, another origin); the calls run in
// Chromium with a fake camera and microphone, over loopback.
import { Browser, BrowserContext, expect, Page, test } from '@playwright/test';
import config from '../playwright.config';
import { createApiKey, expectAccessible, hydrated, screenshot, signIn } from './helpers';

const demoUrl = (process.env.DEMO_URL ?? 'http://127.0.0.1:3001').replace(/\/$/, '');

const launch = config.use?.launchOptions ?? {};
test.use({
  launchOptions: {
    ...launch,
    args: [
      ...(launch.args ?? []),
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      '--allow-loopback-in-peer-connection',
    ],
  },
});

let auth: Record<string, string>;
let widgetKey: string;

test.beforeAll(async ({ browser }) => {
  const page = await browser.newPage();
  await signIn(page);
  auth = { Authorization: `Bearer ${await createApiKey(page)}` };
  widgetKey = (await (await page.request.get('/rest/v1/widget/key', { headers: auth })).json()).widgetKey;
  await page.close();
});

let contexts: BrowserContext[] = [];
test.afterEach(async () => {
  await Promise.all(contexts.map((c) => c.close().catch(() => undefined)));
  contexts = [];
});

async function context(browser: Browser): Promise<BrowserContext> {
  const created = await browser.newContext();
  contexts.push(created);
  return created;
}

const widget = (page: Page) => page.locator('rapport-widget');
const dialog = (page: Page) => widget(page).getByRole('dialog', { name: 'Chat with us' });
const log = (page: Page) => widget(page).getByRole('log', { name: 'Messages' });

/** A visitor on the demo shop, named, with the chat open; returns their customer id. */
async function visitorWithChat(page: Page, name: string): Promise<string> {
  await page.goto(`${demoUrl}/index.html`);
  await expect(page.locator('script[data-rapport-key]')).toHaveAttribute('data-rapport-key', widgetKey);
  const launcher = widget(page).getByRole('button', { name: /^Chat with us/ });
  await expect(launcher).toBeVisible({ timeout: 15_000 });
  await page.evaluate((n) => (window as any).Rapport('identify', { firstName: n }), name);
  await launcher.click();
  await expect(dialog(page)).toBeVisible();
  await expect
    .poll(() =>
      page.evaluate((key) => JSON.parse(localStorage.getItem(`rapport:${key}:visitor`) || 'null')?.customerId ?? null, widgetKey),
    )
    .not.toBeNull();
  return page.evaluate((key) => JSON.parse(localStorage.getItem(`rapport:${key}:visitor`)!).customerId, widgetKey);
}

/** Follows a link that opens in a new tab; returns that tab. */
async function opensTab(page: Page, click: () => Promise<void>): Promise<Page> {
  const [tab] = await Promise.all([page.context().waitForEvent('page'), click()]);
  await tab.waitForLoadState();
  return tab;
}

/** On a call's join page: name, Join. */
async function joinAs(page: Page, name: string) {
  await expect(page.getByText('The conference is open.')).toBeVisible();
  await hydrated(page);
  await expect(page.getByLabel('Your camera preview')).toHaveJSProperty('readyState', 4);
  await page.getByLabel('Your name').fill(name);
  await page.getByRole('button', { name: 'Join', exact: true }).click();
}

const tile = (page: Page, name: string) => page.getByRole('figure', { name, exact: true });

test('an agent calls a visitor from the inbox, and the visitor joins from the chat', async ({ browser }) => {
  test.setTimeout(150_000);
  const name = `Vera ${Date.now()}`;
  const visitor = await (await context(browser)).newPage();
  const customerId = await visitorWithChat(visitor, name);
  await dialog(visitor).getByRole('textbox', { name: 'Your message' }).fill('Could we talk face to face?');
  await dialog(visitor).getByRole('button', { name: 'Send' }).click();

  // The agent opens the conversation and starts a call.
  const agent = await (await context(browser)).newPage();
  await signIn(agent);
  await agent.goto(`/inbox?status=UNREAD&c=${customerId}`);
  await hydrated(agent);
  await expect(agent.getByRole('list', { name: 'Messages' }).getByText('Could we talk face to face?')).toBeVisible();
  await agent.getByRole('button', { name: 'Start a video call' }).click();
  const status = agent.getByRole('status').filter({ hasText: 'The call is open' });
  await expect(status).toBeVisible();
  await expect(agent.getByRole('list', { name: 'Messages' }).getByRole('link', { name: 'Join the video call' })).toBeVisible();
  await expectAccessible(agent);
  await screenshot(agent, 'inbox-call-started');

  // The visitor's chat shows the invitation, live; it opens the call in a new tab.
  const invitation = log(visitor).getByRole('link', { name: 'Join the video call' });
  await expect(invitation).toBeVisible();
  await screenshot(visitor, 'widget-call-invitation');
  const visitorCall = await opensTab(visitor, () => invitation.click());
  await joinAs(visitorCall, name);
  await expect(visitorCall.getByRole('button', { name: 'Leave' })).toBeVisible();

  // The agent joins from the status note, as the host; both see each other.
  const agentCall = await opensTab(agent, () => status.getByRole('link', { name: 'Join the call' }).click());
  await joinAs(agentCall, 'Hana Agent');
  await expect(tile(agentCall, name)).toBeVisible();
  await expect(tile(visitorCall, 'Hana Agent')).toBeVisible();
});

test('a visitor asks for a call: the CALL rule gives it to an agent, who is told and admits them', async ({ browser, request }) => {
  test.setTimeout(180_000);
  const stamp = Date.now();
  const password = 'e2e-agent-password';
  const created = await request.post('/rest/v1/user', {
    headers: auth,
    data: { email: `cleo.${stamp}@example.com`, displayName: `Cleo ${stamp}`, roleId: 'AGENT', password },
  });
  expect(created.status()).toBe(201);
  const cleo = (await created.json()).id;
  const rule = await request.post('/rest/v1/rule/routing', {
    headers: auth,
    data: {
      name: `Calls to Cleo ${stamp}`,
      priority: 0,
      types: ['CALL'],
      actions: [{ type: 'QUEUE', target: { type: 'USER', value: cleo }, agentState: 'ONLINE', maxWaitSeconds: 600 }],
    },
  });
  expect(rule.status()).toBe(201);
  try {
    // Cleo is online, in the inbox.
    const agent = await (await context(browser)).newPage();
    await signIn(agent, `cleo.${stamp}@example.com`, password);
    await hydrated(agent);
    const presence = agent.getByRole('group', { name: 'Your status' });
    await presence.getByRole('button', { name: 'Online' }).click();
    await expect(presence.getByRole('button', { name: 'Online' })).toHaveAttribute('aria-pressed', 'true');

    // The visitor asks for a call from the chat.
    const name = `Cara ${stamp}`;
    const visitor = await (await context(browser)).newPage();
    const customerId = await visitorWithChat(visitor, name);
    await dialog(visitor).getByRole('button', { name: 'Start a video call' }).click();
    const invitation = log(visitor).getByRole('link', { name: 'Join the video call' });
    await expect(invitation).toHaveCount(1);
    await expectAccessible(visitor);
    const visitorCall = await opensTab(visitor, () => invitation.click());
    await joinAs(visitorCall, name);
    await expect(visitorCall.getByText('Waiting for the host to let you in…')).toBeVisible();

    // The conversation went to Cleo by the CALL rule, and her bell says so.
    const customer = await (await request.get(`/rest/v1/customer/${customerId}`, { headers: auth })).json();
    expect(customer.assignedUser).toBe(cleo);
    await expect(agent.getByRole('status').filter({ hasText: '1 unread notification' })).toBeAttached({ timeout: 30_000 });
    await agent.locator('a.bell').click();
    await expect(agent.getByText(`${name} asks for a video call`)).toBeVisible();

    // She opens the conversation, joins from the invitation as the host, and lets Cara in.
    await agent.goto(`/inbox?status=UNREAD&c=${customerId}`);
    await hydrated(agent);
    const join = agent.getByRole('list', { name: 'Messages' }).getByRole('link', { name: 'Join the video call' });
    const agentCall = await opensTab(agent, () => join.click());
    await joinAs(agentCall, `Cleo ${stamp}`);
    await agentCall.getByRole('button', { name: `Admit ${name}` }).click();
    await expect(tile(agentCall, name)).toBeVisible();
    await expect(tile(visitorCall, `Cleo ${stamp}`)).toBeVisible();
  } finally {
    // Leave the shared workspace as it was for the specs that follow.
    await request.delete(`/rest/v1/rule/routing/${(await rule.json()).id}`, { headers: auth });
  }
});
