// The visitor script (frontend/visitor) on a customer's website: the demo shop
// (see shop.ts). The conversation's finer points (rating, typing, read marks,
// transcripts) are in conversation.spec.ts.
import { createHmac } from 'node:crypto';
import { APIRequestContext, expect, Page, test } from '@playwright/test';
import { expectAccessible, hydrated, screenshot, signIn } from './helpers';
import { connectShop, demoUrl, dialog, ids, launcher, log, openDemo, shop, visitor, widget, write } from './shop';

const rapportOrigin = new URL(process.env.BASE_URL ?? 'http://127.0.0.1:3000').origin;

let auth: Record<string, string>;
let widgetKey: string;

test.beforeAll(async ({ browser }) => {
  await connectShop(browser);
  ({ auth, widgetKey } = shop);
});

/** What the shop's server does for a signed-in visitor: signs its external id
 * and e-mail with the workspace's identity secret (made if there is none). */
async function signIdentity(request: APIRequestContext, externalId: string, email = ''): Promise<string> {
  let { secret } = await (await request.get('/rest/v1/widget/identity', { headers: auth })).json();
  if (!secret) secret = (await (await request.post('/rest/v1/widget/identity/rotate', { headers: auth })).json()).secret;
  return createHmac('sha256', secret).update(`${externalId}\n${email}`).digest('hex');
}

async function customer(request: APIRequestContext, id: string) {
  const response = await request.get(`/rest/v1/customer/${id}`, { headers: auth });
  expect(response.status()).toBe(200);
  return response.json();
}

test('a visitor on another origin chats with an agent, live', async ({ browser, page: agent, request }) => {
  test.setTimeout(90_000);
  const { context, page, errors } = await visitor(browser);
  // Live messages come over the widget's WebSocket.
  const sockets: string[] = [];
  page.on('websocket', (ws) => sockets.push(ws.url()));
  const name = `Vera ${Date.now()}`;
  await openDemo(page);
  // The launcher appears once the chat UI has loaded, at idle.
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  const identitySignature = await signIdentity(request, `ext-${name}`);
  await page.evaluate(
    ([n, sig]) => (window as any).Rapport('identify', { firstName: n, externalId: `ext-${n}`, identitySignature: sig }),
    [name, identitySignature],
  );
  await launcher(page).click();
  await expect(dialog(page)).toBeVisible();
  await expect(dialog(page).getByRole('heading', { name: 'Chat with us' })).toBeVisible();
  await expect(dialog(page).getByRole('textbox', { name: 'Your message' })).toBeFocused();
  await write(page, 'Hello! Is the Sencha in stock?');

  // The agent sees it in the inbox and answers.
  await signIn(agent);
  await agent.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Inbox' }).click();
  await hydrated(agent);
  const row = agent.getByRole('link', { name: new RegExp(name) });
  await expect(row).toBeVisible();
  await row.click();
  const thread = agent.getByRole('list', { name: 'Messages' });
  await expect(thread.getByText('Hello! Is the Sencha in stock?')).toBeVisible();
  await agent.getByLabel('Reply').fill('Yes, we have plenty. It ships today.');
  await agent.getByRole('button', { name: 'Send', exact: true }).click();

  // The visitor sees the answer without a reload.
  await expect(log(page).getByText('Yes, we have plenty. It ships today.')).toBeVisible();
  expect(sockets.some((url) => url.endsWith('/rest/v1/widget/socket'))).toBe(true);
  await expectAccessible(page);
  await screenshot(page, 'visitor-chat');

  // The profile given before the start, and the page URL, are on the customer.
  const { customerId } = await ids(page);
  const stored = await customer(request, customerId!);
  expect(stored.firstName).toBe(name);
  expect(stored.externalId).toBe(`ext-${name}`);
  expect(stored.identityVerified).toBe(true);

  // Esc closes and gives focus back to the launcher; a reload keeps the conversation.
  await page.keyboard.press('Escape');
  await expect(dialog(page)).toBeHidden();
  await expect(launcher(page)).toBeFocused();
  await page.reload();
  await page.evaluate(() => (window as any).Rapport.open());
  await expect(log(page).getByText('Yes, we have plenty. It ships today.')).toBeVisible({ timeout: 15_000 });
  expect((await ids(page)).customerId).toBe(customerId);
  expect(errors).toEqual([]);
  await context.close();
});

test('where WebSockets cannot open, live messages come as server-sent events', async ({ browser, request }) => {
  const { context, page, errors } = await visitor(browser);
  // A proxy that takes the upgrade and hangs up, every time.
  await context.routeWebSocket(/\/rest\/v1\/widget\/socket$/, (ws) => ws.close());
  const streamOpened = page.waitForRequest((r) => r.url().endsWith('/rest/v1/widget/stream'));
  await openDemo(page);
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  await launcher(page).click();
  await write(page, 'Anyone there?');
  await streamOpened;
  const { customerId } = await ids(page);
  const answer = `Yes, over the event stream ${Date.now()}`;
  const sent = await request.post('/rest/v1/message', {
    headers: auth,
    data: { customerId, isExternalId: false, type: 'MESSAGE', message: answer },
  });
  expect(sent.status()).toBe(201);
  await expect(log(page).getByText(answer)).toBeVisible();
  expect(errors).toEqual([]);
  await context.close();
});

test('the script API tags the visitor, and events reach the callbacks', async ({ browser, request }) => {
  const { context, page, errors } = await visitor(browser);
  await openDemo(page);
  // Object style, registered before the chat UI loads.
  await page.evaluate(() => {
    const w = window as any;
    w.seen = [];
    for (const name of ['ready', 'open', 'close', 'messageSent']) w.Rapport.on(name, () => w.seen.push(name));
  });
  await page.evaluate(() => (window as any).Rapport.tag('vip', ['checkout']));
  await expect.poll(async () => (await ids(page)).customerId).toBeTruthy();
  const { customerId } = await ids(page);
  // Tags from the page are the customer's `pageTags`, apart from those agents set.
  await expect.poll(async () => (await customer(request, customerId!)).pageTags, { timeout: 10_000 }).toEqual(
    expect.arrayContaining(['vip', 'checkout']),
  );
  expect((await customer(request, customerId!)).tags).toEqual([]);
  await page.evaluate(() => (window as any).Rapport('open'));
  await write(page, 'Tagged and ready.');
  await page.evaluate(() => (window as any).Rapport.close());
  await expect(dialog(page)).toBeHidden();
  expect(await page.evaluate(() => (window as any).seen)).toEqual(['ready', 'open', 'messageSent', 'close']);
  expect(errors).toEqual([]);
  await context.close();
});

test('script errors, resources and visits reach the reports', async ({ browser, request }) => {
  test.setTimeout(60_000);
  const { context, page, errors } = await visitor(browser);
  await openDemo(page);
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  const { visitorId } = await ids(page);
  // The demo's button throws from its click handler: an uncaught error.
  await page.getByRole('button', { name: 'Throw a script error' }).click();
  expect(errors).toEqual(['Demo checkout failed: coupon service timed out']);
  // Leaving the page sends what is pending (keepalive), the visit included.
  await page.getByRole('navigation', { name: 'Shop' }).getByRole('link', { name: 'Teas & teaware' }).click();
  await expect(page.getByRole('heading', { name: 'Teas & teaware' })).toBeVisible();

  await expect
    .poll(
      async () => {
        const report = await request.post('/rest/v1/report/scripterrors', { headers: auth, data: { visitorIds: [visitorId] } });
        expect(report.status()).toBe(200);
        return (await report.json()).errors;
      },
      { timeout: 15_000 },
    )
    .toEqual([
      expect.objectContaining({
        message: 'Error: Demo checkout failed: coupon service timed out',
        fileName: `${demoUrl}/shop.js`,
        count: 1,
      }),
    ]);

  await expect
    .poll(
      async () => {
        const report = await request.post('/rest/v1/report/resources', { headers: auth, data: { visitorIds: [visitorId] } });
        expect(report.status()).toBe(200);
        return (await report.json()).rows.map((r: { resourceName: string; type: string }) => `${r.type} ${r.resourceName}`);
      },
      { timeout: 15_000 },
    )
    // The page itself and its own files; never Rapport's requests.
    .toEqual(expect.arrayContaining(['document index.html', 'css shop.css', 'script shop.js']));
  const rows = await (await request.post('/rest/v1/report/resources', { headers: auth, data: { visitorIds: [visitorId] } })).json();
  expect(rows.rows.map((r: { resourceName: string }) => r.resourceName)).not.toContain('loader.js');

  // A single-page app's URL changes are page views of the same visit: two
  // filters on the catalogue, then leaving it, make a visit of three pages.
  await page.getByRole('button', { name: 'Tea', exact: true }).click();
  await expect(page).toHaveURL(/category=tea/);
  await page.getByRole('button', { name: 'Teaware' }).click();
  await page.getByRole('navigation', { name: 'Shop' }).getByRole('link', { name: 'Home' }).click();
  await expect(page.getByRole('heading', { name: 'Good tea, kindly sent.' })).toBeVisible();
  const totals = async () => {
    const report = await request.post('/rest/v1/report/visit', {
      headers: auth,
      data: {
        metrics: ['VISITS', 'PAGE_VIEWS'].map((metricName) => ({ metricName, visitorIds: [visitorId] })),
        dateFilter: { grouping: 'LAST_7_DAYS' },
      },
    });
    expect(report.status()).toBe(200);
    const sum = { VISITS: 0, PAGE_VIEWS: 0 };
    for (const bucket of Object.values((await report.json()).results) as Record<string, string>[]) {
      sum.VISITS += Number(bucket.VISITS);
      sum.PAGE_VIEWS += Number(bucket.PAGE_VIEWS);
    }
    return sum;
  };
  // The home page (one view), then the catalogue (three).
  await expect.poll(totals, { timeout: 15_000 }).toEqual({ VISITS: 2, PAGE_VIEWS: 4 });
  await context.close();
});

test('the widget renders and works under hostile global CSS', async ({ browser }) => {
  const { context, page, errors } = await visitor(browser);
  await openDemo(page, 'hostile-css.html');
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  const button = await launcher(page).boundingBox();
  expect(button!.width).toBe(56);
  expect(button!.height).toBe(56);
  const viewport = page.viewportSize()!;
  // Bottom right corner, where it belongs.
  expect(button!.x + button!.width).toBeGreaterThan(viewport.width - 40);
  expect(button!.y + button!.height).toBeGreaterThan(viewport.height - 40);
  await launcher(page).click();
  await expect(dialog(page)).toBeVisible();
  const panel = await dialog(page).boundingBox();
  expect(panel!.width).toBe(370);
  const box = dialog(page).getByRole('textbox', { name: 'Your message' });
  expect(await box.evaluate((el) => getComputedStyle(el).fontSize)).toBe('16px');
  await write(page, 'Writing from a page with hostile CSS.');
  await screenshot(page, 'visitor-hostile-css');
  expect(errors).toEqual([]);
  await context.close();
});

test('the widget works under a strict Content-Security-Policy', async ({ browser }) => {
  const { context, page, errors } = await visitor(browser);
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  await openDemo(page, 'strict-csp.html');
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  // Styled through the constructed stylesheet (no inline style is allowed here).
  expect(await launcher(page).evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(29, 78, 216)');
  await launcher(page).click();
  await write(page, 'Writing from a page with a strict CSP.');
  // Leave the page: tracking's keepalive request is a connection the CSP allows.
  await page.goto(`${demoUrl}/strict-csp.html`);
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  expect(violations).toEqual([]);
  expect(errors).toEqual([]);
  await context.close();
});

test('on a phone the chat fills the screen and inputs do not zoom', async ({ browser }) => {
  const { context, page } = await visitor(browser, { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  await openDemo(page);
  await page.evaluate(() => (window as any).Rapport('open'));
  await expect(dialog(page)).toBeVisible({ timeout: 15_000 });
  await dialog(page).evaluate((el) => Promise.all(el.getAnimations().map((a) => a.finished)));
  const panel = await dialog(page).boundingBox();
  expect([panel!.x, panel!.y, panel!.width, panel!.height].map(Math.round)).toEqual([0, 0, 390, 844]);
  const box = dialog(page).getByRole('textbox', { name: 'Your message' });
  expect(await box.evaluate((el) => getComputedStyle(el).fontSize)).toBe('16px');
  await screenshot(page, 'visitor-phone');
  await context.close();
});

test('when Rapport is unreachable the shop still works, with no uncaught error', async ({ browser }) => {
  test.setTimeout(90_000);
  // Rapport down altogether: not even the loader arrives.
  const { context, page, errors } = await visitor(browser);
  await context.route(`${rapportOrigin}/**`, (route) => route.abort('connectionrefused'));
  await openDemo(page);
  await page.getByRole('button', { name: 'Ask us anything' }).click();
  await page.getByRole('button', { name: 'Add to cart' }).first().click();
  await expect(page.locator('#cart-count')).toHaveText('1');
  await page.waitForTimeout(2000);
  expect(errors).toEqual([]);
  await context.close();

  // The scripts load but the API is down: the chat says so, keeps what the
  // visitor typed, and sends it once Rapport is back.
  const second = await visitor(browser);
  await second.context.route(`${rapportOrigin}/rest/**`, (route) => route.abort('connectionrefused'));
  await openDemo(second.page);
  await launcher(second.page).click();
  await expect(dialog(second.page).getByRole('status').first()).toContainText('cannot be reached', { timeout: 20_000 });
  await dialog(second.page).getByRole('textbox', { name: 'Your message' }).fill('Are you there?');
  await dialog(second.page).getByRole('button', { name: 'Send' }).click();
  const bubble = log(second.page).locator('.msg', { hasText: 'Are you there?' });
  await expect(bubble).toHaveClass(/failed/, { timeout: 30_000 });
  await second.page.getByRole('button', { name: 'Add to cart' }).first().click();
  await expect(second.page.locator('#cart-count')).toHaveText('1');
  await second.context.unroute(`${rapportOrigin}/rest/**`);
  await bubble.getByRole('button', { name: 'Retry' }).click();
  await expect(bubble).not.toHaveClass(/failed/);
  await expect(bubble).not.toContainText('Sending', { timeout: 15_000 });
  expect(second.errors).toEqual([]);
  await second.context.close();
});

// The workspace's business hours say it is closed today (a holiday): the widget
// offers the offline form, which reaches the inbox as the visitor's message.
test('outside opening hours the visitor leaves an offline form', async ({ browser, request }) => {
  const today = new Date();
  const hours = await request.post('/rest/v1/openinghours', {
    headers: auth,
    data: {
      name: `Closed today ${Date.now()}`,
      timezone: 'UTC',
      conditions: [{ type: 'WEEKDAY', weekday: 'EVERYDAY', startHours: { hour: 0, minute: 0 }, endHours: { hour: 23, minute: 59 } }],
      holidays: [{ name: 'Inventory day', from: { year: today.getUTCFullYear(), month: today.getUTCMonth() + 1, day: today.getUTCDate() } }],
    },
  });
  expect(hours.status()).toBe(201);
  const hoursId = (await hours.json()).id;
  const closed = await request.put('/rest/v1/workspace', { headers: auth, data: { businessHoursId: hoursId } });
  expect(closed.status()).toBe(200);
  const config = await request.get('/rest/v1/widget/config', { headers: { 'rapport-widget-key': widgetKey } });
  expect((await config.json()).open).toBe(false);
  const { context, page, errors } = await visitor(browser);
  await openDemo(page);
  await launcher(page).click();
  const form = dialog(page);
  await expect(form.getByRole('heading', { name: 'We are away right now' })).toBeVisible();
  await expect(form.getByRole('textbox', { name: 'Your message' })).toBeHidden();
  await form.getByLabel('Name').fill('Olga Offline');
  await form.getByLabel('E-mail').fill('olga@example.com');
  await form.getByLabel('Message', { exact: true }).fill('Please call me back about order 1042.');
  await form.getByRole('button', { name: 'Send message' }).click();
  await expect(form.getByText('Thank you! We will get back to you soon.')).toBeVisible();
  const { customerId } = await ids(page);
  const messages = await request.get(`/rest/v1/customer/${customerId}/message`, { headers: auth });
  const text = (await messages.json()).results.map((m: { message: string }) => m.message).join('\n');
  expect(text).toContain('Please call me back about order 1042.');
  expect(text).toContain('olga@example.com');
  expect(errors).toEqual([]);
  await context.close();
  // Open again for the specs that follow.
  expect((await request.put('/rest/v1/workspace', { headers: auth, data: { businessHoursId: null } })).status()).toBe(200);
  await request.delete(`/rest/v1/openinghours/${hoursId}`, { headers: auth });
});

// Identity verification: the shop signs its signed-in customer's id, and the
// customer continues one conversation on any device.
test('a signed-in customer continues the conversation on another device', async ({ browser, request }) => {
  test.setTimeout(60_000);
  const externalId = `device-${Date.now()}`;
  const identitySignature = await signIdentity(request, externalId);
  const signInOnShop = (page: Page) =>
    page.evaluate(
      ([id, sig]) => (window as any).Rapport('identify', { externalId: id, firstName: 'Dana', identitySignature: sig }),
      [externalId, identitySignature],
    );

  // On the laptop she is signed in on the shop from the start, and writes.
  const laptop = await visitor(browser);
  await openDemo(laptop.page);
  await expect(launcher(laptop.page)).toBeVisible({ timeout: 15_000 });
  await signInOnShop(laptop.page);
  await launcher(laptop.page).click();
  await write(laptop.page, 'I started this on my laptop');

  // On the phone she is a visitor first, with the chat open; then she signs in
  // on the shop, and the chat shows her conversation.
  const phone = await visitor(browser);
  await openDemo(phone.page);
  await expect(launcher(phone.page)).toBeVisible({ timeout: 15_000 });
  await launcher(phone.page).click();
  await expect.poll(async () => (await ids(phone.page)).customerId).toBeTruthy();
  const anonymous = (await ids(phone.page)).customerId;
  await signInOnShop(phone.page);
  await expect(log(phone.page).getByText('I started this on my laptop')).toBeVisible({ timeout: 15_000 });
  const { customerId } = await ids(phone.page);
  expect(customerId).toBe((await ids(laptop.page)).customerId);
  expect(customerId).not.toBe(anonymous);

  // What she writes on the phone reaches the laptop, live.
  await write(phone.page, 'and finish it on my phone');
  await expect(log(laptop.page).getByText('and finish it on my phone')).toBeVisible({ timeout: 15_000 });
  const stored = await customer(request, customerId!);
  expect([stored.externalId, stored.identityVerified]).toEqual([externalId, true]);
  expect(laptop.errors.concat(phone.errors)).toEqual([]);
  await laptop.context.close();
  await phone.context.close();
});

// `Rapport.identify` after the visitor started: POST /widget/profile.
test('identify after the visitor started updates the customer', async ({ browser, request }) => {
  const { context, page, errors } = await visitor(browser);
  await openDemo(page);
  await page.evaluate(() => (window as any).Rapport.tag('returning'));
  await expect.poll(async () => (await ids(page)).customerId).toBeTruthy();
  const { customerId } = await ids(page);
  // Unsigned, the e-mail is only a claim, which agents see marked as such.
  await page.evaluate(() => (window as any).Rapport.identify({ email: 'late@example.com', firstName: 'Lately' }));
  await expect
    .poll(async () => {
      const c = await customer(request, customerId!);
      return [c.email, c.claimedEmail, c.firstName];
    })
    .toEqual([null, 'late@example.com', 'Lately']);
  expect(errors).toEqual([]);
  await context.close();
});

// Files (POST /widget/file, the inbox's file form). Test files have ASCII names:
// a download link ends with its file's name, and the inbox names the link by
// that last part.
const attachButton = (page: Page) => dialog(page).getByRole('button', { name: 'Attach a file' });

/** Opens the inbox conversation of the customer with this name. */
async function openConversation(agent: Page, name: string) {
  await signIn(agent);
  await agent.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Inbox' }).click();
  await hydrated(agent);
  const row = agent.getByRole('link', { name: new RegExp(name) });
  await expect(row).toBeVisible({ timeout: 15_000 });
  await row.click();
  return agent.getByRole('list', { name: 'Messages' });
}

test('a visitor sends a file from the widget, and the agent downloads it', async ({ browser, page: agent, request }) => {
  test.setTimeout(90_000);
  const config = await request.get('/rest/v1/widget/config', { headers: { 'rapport-widget-key': widgetKey } });
  expect((await config.json()).maxFileBytes).toBeGreaterThan(0);
  const { context, page, errors } = await visitor(browser);
  const name = `Fenna ${Date.now()}`;
  const file = {
    name: `order-notes-${Date.now()}.txt`,
    mimeType: 'text/plain',
    buffer: Buffer.from('Order 1042: 2 × Sencha, 1 × kyūsu 急須.\n'),
  };
  await openDemo(page);
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  await page.evaluate((n) => (window as any).Rapport('identify', { firstName: n }), name);
  await launcher(page).click();
  // The button shows once the config says files are taken; the keyboard opens
  // the file picker from it. (Waiting for the picker first lets Playwright
  // catch it: a bare key press could come before it listens.)
  await expect(attachButton(page)).toBeVisible();
  const chooser = page.waitForEvent('filechooser');
  await attachButton(page).press('Enter');
  await (await chooser).setFiles(file);
  // Sent: the visitor's bubble becomes a link to the stored file.
  const bubble = log(page).locator('.msg', { hasText: file.name });
  await expect(bubble.getByRole('link', { name: `File: ${file.name}` })).toBeVisible({ timeout: 15_000 });
  await expect(bubble).not.toHaveClass(/failed/);
  await expect(bubble).not.toContainText('Sending');

  // The agent sees it in the conversation and downloads the same bytes.
  const thread = await openConversation(agent, name);
  const link = thread.locator('a.file', { hasText: file.name });
  await expect(link).toBeVisible();
  const download = await agent.request.get((await link.getAttribute('href'))!);
  expect(download.status()).toBe(200);
  expect(download.headers()['content-disposition']).toContain('attachment');
  expect(await download.body()).toEqual(file.buffer);
  expect(errors).toEqual([]);
  await context.close();
});

test('an agent sends a file from the inbox, and the visitor gets it in the widget', async ({ browser, page: agent }) => {
  test.setTimeout(90_000);
  const { context, page, errors } = await visitor(browser);
  const name = `Gustav ${Date.now()}`;
  await openDemo(page);
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  await page.evaluate((n) => (window as any).Rapport('identify', { firstName: n }), name);
  await launcher(page).click();
  await write(page, 'Could you send me the invoice, please?');

  const thread = await openConversation(agent, name);
  await expect(thread.getByText('Could you send me the invoice, please?')).toBeVisible();
  const file = {
    name: `invoice-1042-${Date.now()}.txt`,
    mimeType: 'text/plain',
    buffer: Buffer.from('Invoice 1042\nSencha 2 × 12.25 EUR\n'),
  };
  await agent.getByLabel('Attach a file', { exact: true }).setInputFiles(file);
  await agent.getByRole('button', { name: 'Send file' }).click();
  await expect(thread.locator('a.file', { hasText: file.name })).toBeVisible({ timeout: 15_000 });

  // The visitor gets it live, as a link named after the file; the link works
  // without a Rapport sign-in.
  const link = log(page).getByRole('link', { name: `File: ${file.name}` });
  await expect(link).toBeVisible({ timeout: 15_000 });
  const download = await page.request.get((await link.getAttribute('href'))!);
  expect(download.status()).toBe(200);
  expect(await download.body()).toEqual(file.buffer);
  expect(errors).toEqual([]);
  await context.close();
});

test('the widget refuses a file over the limit without sending it', async ({ browser, request }) => {
  const config = await request.get('/rest/v1/widget/config', { headers: { 'rapport-widget-key': widgetKey } });
  const max = (await config.json()).maxFileBytes as number;
  expect(max).toBeGreaterThan(0);
  // The file crosses to the browser whole: beyond 20 MB that only slows the
  // test down, and the check is the same.
  test.skip(max + 1 > 20 * 1024 * 1024, `the limit of ${max} B is too large for a test file`);
  const { context, page, errors } = await visitor(browser);
  const uploads: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/rest/v1/widget/file')) uploads.push(r.url());
  });
  await openDemo(page);
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  await launcher(page).click();
  await expect(attachButton(page)).toBeVisible();
  const file = { name: 'catalogue-scan.pdf', mimeType: 'application/pdf', buffer: Buffer.alloc(max + 1, 1) };
  await widget(page).locator('input[type="file"]').setInputFiles(file);
  // The limit in megabytes, as the widget writes it in English.
  const mb = new Intl.NumberFormat('en', { maximumFractionDigits: 1 }).format(max / 1048576);
  const bubble = log(page).locator('.msg', { hasText: file.name });
  await expect(bubble).toHaveClass(/failed/);
  await expect(bubble).toContainText(`The file is larger than ${mb} MB.`);
  // Sending it again cannot help: no retry.
  await expect(bubble.getByRole('button', { name: 'Retry' })).toHaveCount(0);
  expect(uploads).toEqual([]);
  expect(errors).toEqual([]);
  await context.close();
});
