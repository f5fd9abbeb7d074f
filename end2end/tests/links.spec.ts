import { expect, test } from '@playwright/test';
import { adminEmail, createApiKey, expectAccessible, hydrated, screenshot, signIn } from './helpers';

test('an agent generates co-browsing links and a live-view link, and copies them', async ({ page, context, browser, request }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await signIn(page);

  // A visitor session, recorded the way an integration would.
  const token = await createApiKey(page);
  const tag = `e2e-${Date.now()}`;
  const sessionId = `session-${tag}`;
  const recorded = await request.post('/rest/v1/session', {
    headers: { Authorization: `Bearer ${token}` },
    data: {
      id: sessionId,
      visitorId: `visitor-${tag}`,
      entryUrl: 'https://shop.example.com/',
      pageCount: 3,
      startedAt: new Date().toISOString(),
      tags: [tag],
    },
  });
  expect(recorded.status()).toBe(200);

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Links' }).click();
  await expect(page.getByRole('heading', { name: 'Links', level: 1 })).toBeVisible();
  await hydrated(page);

  // Co-browsing: URL in, two links out, each with a copy button.
  await page.getByLabel('Start at URL').fill('https://shop.example.com/checkout');
  await page.getByRole('button', { name: 'Generate co-browsing links' }).click();
  const join = page.getByRole('textbox', { name: 'join link' });
  await expect(join).toHaveValue(/\/cobrowse\/.+token=/);
  await expect(page.getByRole('textbox', { name: 'host link' })).toHaveValue(/\/cobrowse\/.+token=/);
  await page.getByRole('button', { name: 'Copy join link' }).click();
  await expect(page.getByRole('button', { name: 'Copied join link' })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await join.inputValue());

  // The join link opens the shared session for a customer who is not signed in.
  const customer = await browser.newContext();
  const customerPage = await customer.newPage();
  await customerPage.goto(await join.inputValue());
  await expect(customerPage.getByRole('heading', { name: 'You are joining a session' })).toBeVisible();
  await expect(customerPage.getByText('https://shop.example.com/checkout')).toBeVisible();
  await customer.close();

  // Live view: pick the session (filtered by its tag) and a language.
  await page.getByLabel('Only sessions tagged').fill(tag);
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page.getByRole('radio')).toHaveCount(1);
  // Filtering keeps the co-browsing links generated above.
  await expect(join).toHaveValue(/\/cobrowse\/.+token=/);
  await page.getByRole('radio', { name: new RegExp(`visitor-${tag}`) }).check();
  await page.getByLabel('Language').selectOption('de');
  await page.getByRole('button', { name: 'Generate live-view link' }).click();
  const live = page.getByRole('textbox', { name: 'live-view link' });
  await expect(live).toHaveValue(/\/liveview\/open\?token=/);
  await page.getByRole('button', { name: 'Copy live-view link' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await live.inputValue());
  await expectAccessible(page);
  await screenshot(page, 'links');

  // The public link shows the session, in German, and nothing else: the viewer
  // is not signed in to the dashboard.
  const viewer = await browser.newContext();
  const viewerPage = await viewer.newPage();
  await viewerPage.goto(await live.inputValue());
  await viewerPage.getByRole('button', { name: 'Live-Ansicht öffnen' }).click();
  await expect(viewerPage.getByRole('heading', { name: 'Live-Ansicht' })).toBeVisible();
  await expect(viewerPage.locator('html')).toHaveAttribute('lang', 'de');
  await expect(viewerPage.getByText(`visitor-${tag}`)).toBeVisible();
  await viewerPage.goto('/settings/users');
  await expect(viewerPage).toHaveURL(/\/login/);
  await viewer.close();
});

test('a live view tells the browser its language, in each of the five', async ({ page, browser, request }) => {
  await signIn(page);
  const token = await createApiKey(page);
  const sessionId = `session-lang-${Date.now()}`;
  const recorded = await request.post('/rest/v1/session', {
    headers: { Authorization: `Bearer ${token}` },
    data: { id: sessionId, visitorId: `visitor-${sessionId}`, startedAt: new Date().toISOString() },
  });
  expect(recorded.status()).toBe(200);

  const languages = [
    { code: 'en', tag: 'en', open: 'Open the live view', title: 'Live view' },
    { code: 'de', tag: 'de', open: 'Live-Ansicht öffnen', title: 'Live-Ansicht' },
    { code: 'jp', tag: 'ja', open: 'ライブビューを開く', title: 'ライブビュー' },
    { code: 'uk', tag: 'uk', open: 'Відкрити перегляд', title: 'Перегляд наживо' },
    { code: 'ru', tag: 'ru', open: 'Открыть просмотр', title: 'Просмотр в реальном времени' },
  ];
  for (const { code, tag, open, title } of languages) {
    const created = await request.post('/rest/v1/liveview/link', {
      headers: { Authorization: `Bearer ${token}` },
      data: { sessionId, email: adminEmail, language: code },
    });
    expect(created.status()).toBe(201);
    const viewer = await browser.newContext();
    const viewerPage = await viewer.newPage();
    await viewerPage.goto((await created.json()).link);
    await expect(viewerPage.locator('html')).toHaveAttribute('lang', tag);
    await viewerPage.getByRole('button', { name: open }).click();
    await expect(viewerPage.getByRole('heading', { level: 1, name: title })).toBeVisible();
    await hydrated(viewerPage);
    // Hydration keeps it: the document, not only a part of it, is in that language.
    await expect(viewerPage.locator('html')).toHaveAttribute('lang', tag);
    await expect(viewerPage).toHaveTitle(`${title} · Rapport`);
    await viewer.close();
  }
});
