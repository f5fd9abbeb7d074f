// Session recording (issue 23) on a customer's website: the demo shop, served from
// DEMO_URL, another origin than Rapport (BASE_URL). The recorder (recorder.js)
// records the page with every input masked and never the chat widget; the session
// is listed by POST /rest/v1/session/recorded with the tags the script set, the
// dashboard's session page (/sessions/{id}) replays it, and the live view
// (/sessions/{id}/live-view) shows a typed character within 2 s and says when
// the visitor switches tabs or leaves the page.
import { APIRequestContext, Browser, BrowserContext, expect, Page, test } from '@playwright/test';
import { adminEmail, createApiKey, expectAccessible, screenshot, signIn } from './helpers';

const demoUrl = (process.env.DEMO_URL ?? 'http://127.0.0.1:3001').replace(/\/$/, '');

let auth: Record<string, string>;
let previous: Record<string, unknown> | null = null;

test.beforeAll(async ({ browser }) => {
  const page = await browser.newPage();
  await signIn(page);
  auth = { Authorization: `Bearer ${await createApiKey(page)}` };
  // Record every visitor, without asking for consent; restored afterwards.
  const current = await page.request.get('/rest/v1/workspace/recording', { headers: auth });
  if (current.ok()) previous = await current.json();
  const set = await page.request.put('/rest/v1/workspace/recording', {
    headers: auth,
    data: { enabled: true, requireConsent: false, maskSelector: '.price', blockSelector: null },
  });
  expect(set.status()).toBe(200);
  await page.close();
});

test.afterAll(async ({ request }) => {
  if (previous) await request.put('/rest/v1/workspace/recording', { headers: auth, data: previous });
});

/** A visitor's browser, tagged before the loader runs: the queued call reaches
 * the loader before the recorder starts, so the recording's start carries it. */
async function visitor(browser: Browser, tag: string): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext();
  await context.addInitScript((t) => {
    const w = window as any;
    w.Rapport = function () {
      (w.Rapport.q = w.Rapport.q || []).push(arguments);
    };
    w.Rapport('tag', t);
  }, tag);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { context, page, errors };
}

/** The recorded session with this tag, once Rapport lists it. */
async function recorded(request: APIRequestContext, tag: string): Promise<any> {
  let found: any = null;
  await expect
    .poll(
      async () => {
        const response = await request.post('/rest/v1/session/recorded', {
          headers: auth,
          data: { tagFilter: { tagsFilter: [tag] }, pageable: { pageSize: 10 } },
        });
        expect(response.status()).toBe(200);
        found = (await response.json()).results[0] ?? null;
        return found && found.id;
      },
      { timeout: 20_000 },
    )
    .toBeTruthy();
  return found;
}

/** The session's stored events (the REST replay source). */
async function events(request: APIRequestContext, id: string): Promise<any[]> {
  const response = await request.get(`/rest/v1/session/${id}/events`, { headers: auth });
  expect(response.status()).toBe(200);
  return response.json();
}

/** Adds a text field to the demo page: the recording sees it as a DOM change. */
async function addField(page: Page) {
  await page.evaluate(() => {
    const label = document.createElement('label');
    label.append('Coupon code ');
    const input = document.createElement('input');
    input.id = 'coupon';
    label.append(input);
    document.querySelector('main')!.prepend(label);
  });
}

test('a session is recorded, listed with its tags, and replays the page', async ({ browser, page: agent, request }) => {
  test.setTimeout(90_000);
  const tag = `rec-${Date.now()}`;
  const { context, page, errors } = await visitor(browser, tag);
  await page.goto(`${demoUrl}/products.html`);
  await expect(page.locator('rapport-widget')).toBeAttached({ timeout: 15_000 });
  // The recorder starts once the page is idle; what follows is recorded as it happens.
  const session = await recorded(request, tag);
  await addField(page);
  await page.locator('#coupon').fill('SECRET42');
  // A single-page navigation: a page to jump to in the replay.
  await page.getByRole('button', { name: 'Tea', exact: true }).click();
  await expect(page).toHaveURL(/category=tea/);

  expect(session.tags).toContain(tag);
  expect(session.entryUrl).toContain('/products.html');
  // Wait until the typing and the navigation are stored (batches go every 5 s).
  await expect
    .poll(async () => JSON.stringify(await events(request, session.id)), { timeout: 20_000 })
    .toContain('rapport.page');
  const stored = await events(request, session.id);
  const text = JSON.stringify(stored);
  // The first stored batch starts with the page's Meta and full snapshot.
  expect(stored.slice(0, 2).map((e) => e.type)).toEqual([4, 2]);
  // Inputs are masked, the tenant's mask selector and the chat widget stay out.
  expect(text).not.toContain('SECRET42');
  expect(text).toContain('********');
  expect(text).not.toContain('9.50');
  // The widget's own UI (its message box) is never recorded.
  expect(text).not.toContain('Your message');
  expect(errors).toEqual([]);
  await context.close();

  // The agent replays it on the session page.
  await signIn(agent);
  await agent.goto(`/sessions/${session.id}`);
  const replay = agent.locator('[data-rapport-replay]');
  await expect(replay).toBeVisible();
  const frame = replay.frameLocator('iframe');
  await expect(frame.getByRole('heading', { name: 'Teas & teaware' })).toBeVisible({ timeout: 15_000 });
  const jump = replay.getByRole('navigation', { name: 'Jump to' });
  await expect(jump.getByRole('button', { name: /Page: .*products\.html/ }).first()).toBeVisible();
  const spaPage = jump.getByRole('button', { name: /Page: .*category=tea/ });
  await expect(spaPage).toBeVisible();
  await spaPage.click();
  await expect(frame.locator('#coupon')).toHaveValue(/^\*+$/);
  await expect(replay.getByRole('button', { name: '8x' })).toBeVisible();
  await expectAccessible(agent, true);
  await screenshot(agent, 'recording-replay');
});

test('an agent watches live: a typed character shows within 2 s, masked', async ({ browser, page: agent, request }) => {
  test.setTimeout(90_000);
  const tag = `live-${Date.now()}`;
  const { context, page, errors } = await visitor(browser, tag);
  await page.goto(`${demoUrl}/index.html`);
  await expect(page.locator('rapport-widget')).toBeAttached({ timeout: 15_000 });
  const session = await recorded(request, tag);

  await signIn(agent);
  await agent.goto(`/sessions/${session.id}/live-view`);
  const live = agent.locator('[data-rapport-live]');
  // Joining makes the script take a full snapshot and stream every 100 ms.
  await expect(live.getByRole('status')).toHaveText('Live', { timeout: 15_000 });
  const frame = live.frameLocator('iframe');
  await expect(frame.getByRole('heading', { name: 'Good tea, kindly sent.' })).toBeVisible();
  // The chat widget is recorded as an empty placeholder, never its contents.
  await expect(frame.getByText('Chat with us')).toHaveCount(0);

  await addField(page);
  await expect(frame.locator('#coupon')).toBeAttached({ timeout: 2_000 });
  await page.locator('#coupon').focus();
  const started = Date.now();
  await page.keyboard.type('Z');
  await expect(frame.locator('#coupon')).toHaveValue('*', { timeout: 2_000 });
  expect(Date.now() - started).toBeLessThan(2_000);
  await page.keyboard.type('Y');
  await expect(frame.locator('#coupon')).toHaveValue('**', { timeout: 2_000 });
  await expectAccessible(agent, true);
  await screenshot(agent, 'recording-live');

  expect(errors).toEqual([]);
  await context.close();
});

// Spec 2.13: a live-view link opens that session's live view, in the link's
// language, signed in for that view only.
test('a live-view link opens the live view in its language, and nothing else', async ({ browser, request }) => {
  test.setTimeout(90_000);
  const tag = `link-${Date.now()}`;
  const { context, page, errors } = await visitor(browser, tag);
  await page.goto(`${demoUrl}/index.html`);
  await expect(page.locator('rapport-widget')).toBeAttached({ timeout: 15_000 });
  const session = await recorded(request, tag);
  const created = await request.post('/rest/v1/liveview/link', {
    headers: auth,
    data: { sessionId: session.id, email: adminEmail, language: 'de' },
  });
  expect(created.status()).toBe(201);
  const { link } = await created.json();

  const viewerContext = await browser.newContext();
  const viewer = await viewerContext.newPage();
  await viewer.goto(link);
  // The link's page only offers to open it (link scanners fetch links too).
  await viewer.getByRole('button', { name: 'Live-Ansicht öffnen' }).click();
  const live = viewer.locator('[data-rapport-live]');
  await expect(live).toHaveAttribute('data-lang', 'de');
  await expect(live.getByRole('status')).toHaveText('Live', { timeout: 15_000 });
  await expect(viewer.getByRole('heading', { level: 1 })).toHaveText('Live-Ansicht');
  const frame = live.frameLocator('iframe');
  await expect(frame.getByRole('heading', { name: 'Good tea, kindly sent.' })).toBeVisible();
  await addField(page);
  await expect(frame.locator('#coupon')).toBeAttached({ timeout: 2_000 });

  // The grant opens this view only: the dashboard asks to sign in.
  await viewer.goto('/inbox');
  await expect(viewer).toHaveURL(/\/login/);
  expect(errors).toEqual([]);
  await viewerContext.close();
  await context.close();
});

/** Makes the page look hidden or visible to its scripts. Headless Chromium
 * keeps every page visible (another tab in front changes nothing), so a
 * visitor switching tabs is simulated where the recorder looks: the
 * `visibilityState` it reads and the `visibilitychange` it listens to. */
async function setVisibility(page: Page, state: 'hidden' | 'visible') {
  await page.evaluate((s) => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => s });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => s === 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  }, state);
}

test('the live view says when the visitor switches tabs, comes back and leaves', async ({ browser, page: agent, request }) => {
  test.setTimeout(90_000);
  const tag = `left-${Date.now()}`;
  const { context, page, errors } = await visitor(browser, tag);
  await page.goto(`${demoUrl}/index.html`);
  await expect(page.locator('rapport-widget')).toBeAttached({ timeout: 15_000 });
  const session = await recorded(request, tag);

  await signIn(agent);
  await agent.goto(`/sessions/${session.id}/live-view`);
  const live = agent.locator('[data-rapport-live]');
  const status = live.getByRole('status');
  await expect(status).toHaveText('Live', { timeout: 15_000 });
  await expect(live.frameLocator('iframe').getByRole('heading', { name: 'Good tea, kindly sent.' })).toBeVisible();

  // The visitor looks at another tab, then comes back.
  await setVisibility(page, 'hidden');
  await expect(status).toHaveText('The visitor switched to another tab or window.', { timeout: 10_000 });
  await setVisibility(page, 'visible');
  await expect(status).toHaveText('Live', { timeout: 10_000 });

  // The visitor leaves the page: pagehide sends the last batch with keepalive.
  await page.goto('about:blank');
  await expect(status).toHaveText('The visitor left this page.', { timeout: 10_000 });
  expect(errors).toEqual([]);
  await context.close();
});

// Co-browsing on a site with the script (issue 25): the agent asks from the live
// view, the visitor accepts, sees the agent's pointer, lets them click and type
// (never into a password field), and ends it; asked again, the agent ends it.
test('an agent co-browses with a visitor on the visitor\'s own page', async ({ browser, page: agent, request }) => {
  test.setTimeout(90_000);
  const tag = `cobrowse-${Date.now()}`;
  const { context, page, errors } = await visitor(browser, tag);
  await page.goto(`${demoUrl}/index.html`);
  await expect(page.locator('rapport-widget')).toBeAttached({ timeout: 15_000 });
  const session = await recorded(request, tag);
  await addField(page);
  await page.evaluate(() => {
    const gift = document.createElement('button');
    gift.id = 'gift';
    gift.textContent = 'Add gift wrap';
    gift.style.cssText = 'position:fixed;left:20px;top:220px;width:260px;height:60px;z-index:9';
    gift.onclick = () => (gift.textContent = 'Gift wrap added');
    const secret = document.createElement('input');
    secret.id = 'secret';
    secret.type = 'password';
    secret.style.cssText = 'position:fixed;left:20px;top:300px;width:260px;z-index:9';
    document.body.append(gift, secret);
  });

  // Tall enough that the whole replayed page is in view: the agent's mouse
  // acts where it is.
  await agent.setViewportSize({ width: 1280, height: 1400 });
  await signIn(agent);
  await agent.goto(`/sessions/${session.id}/live-view`);
  const live = agent.locator('[data-rapport-live]');
  await expect(live.locator('.rapport-live__status')).toHaveText('Live', { timeout: 15_000 });
  const frame = live.frameLocator('iframe');
  await expect(frame.locator('#gift')).toBeAttached({ timeout: 5_000 });

  // The agent asks; the visitor's page asks the visitor, who accepts.
  await live.getByRole('button', { name: 'Co-browse' }).click();
  await expect(live.getByText('Waiting for the visitor to accept…')).toBeVisible();
  const dialog = page.getByRole('dialog', { name: 'Co-browsing request' });
  await expect(dialog).toContainText('would like to browse with you');
  await dialog.getByRole('button', { name: 'Accept' }).click();
  await expect(live.getByText('Co-browsing. The visitor sees your pointer.')).toBeVisible();
  const bar = page.getByRole('region', { name: 'Co-browsing' });
  await expect(bar).toContainText('is browsing with you');

  // The agent's pointer shows on the visitor's page; a click without control
  // only points (the button is not pressed).
  const gift = (await frame.locator('#gift').boundingBox())!;
  await agent.mouse.move(gift.x + 10, gift.y + 10);
  await agent.mouse.move(gift.x + gift.width / 2, gift.y + gift.height / 2, { steps: 5 });
  await expect(page.locator('.rapport-cobrowse-pointer')).toBeVisible();
  await agent.mouse.click(gift.x + gift.width / 2, gift.y + gift.height / 2);
  await expect(page.locator('.rapport-cobrowse-highlight')).toBeAttached();
  await expect(page.locator('#gift')).toHaveText('Add gift wrap');

  // The visitor lets the agent click and type: the click presses the button,
  // the typing fills the coupon field, which the agent sees masked.
  await bar.getByRole('button', { name: 'Let them click and type' }).click();
  await expect(live.getByText(/You have control\./)).toBeVisible();
  await agent.mouse.click(gift.x + gift.width / 2, gift.y + gift.height / 2);
  await expect(page.locator('#gift')).toHaveText('Gift wrap added');
  const coupon = (await frame.locator('#coupon').boundingBox())!;
  await agent.mouse.click(coupon.x + 5, coupon.y + coupon.height / 2);
  await agent.keyboard.type('AB');
  await expect(page.locator('#coupon')).toHaveValue('AB');
  await expect(frame.locator('#coupon')).toHaveValue('**');
  // A password field stays closed to the agent.
  const secret = (await frame.locator('#secret').boundingBox())!;
  await agent.mouse.click(secret.x + 5, secret.y + secret.height / 2);
  await agent.keyboard.type('xy');
  await expect(page.locator('#secret')).toHaveValue('');

  // The visitor ends it, and both sides say so.
  await bar.getByRole('button', { name: 'End' }).click();
  await expect(live.getByText('Co-browsing ended.')).toBeVisible();
  await expect(bar).toHaveCount(0);
  await expect(page.locator('.rapport-cobrowse-pointer')).toHaveCount(0);

  // Asked again, the agent ends it this time: the visitor is told, not left
  // wondering where the bar went.
  await live.getByRole('button', { name: 'Co-browse' }).click();
  await page.getByRole('dialog', { name: 'Co-browsing request' }).getByRole('button', { name: 'Accept' }).click();
  await expect(bar).toContainText('is browsing with you');
  await live.getByRole('button', { name: 'End co-browsing' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'stopped browsing with you' })).toBeVisible();
  await expect(bar).toHaveCount(0);

  // The co-browse report counts it.
  const report = await request.post('/rest/v1/report/cobrowse', {
    headers: auth,
    data: { metrics: [{ metricName: 'COBROWSE_SESSIONS' }], dateFilter: { grouping: 'TODAY' } },
  });
  expect(report.status()).toBe(200);
  const buckets = Object.values((await report.json()).results) as Record<string, string>[];
  expect(buckets.reduce((n, b) => n + Number(b.COBROWSE_SESSIONS ?? 0), 0)).toBeGreaterThanOrEqual(1);
  await expectAccessible(agent, true);

  expect(errors).toEqual([]);
  await context.close();
});
