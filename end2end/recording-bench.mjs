// Recording figures of issue 23 that need a real browser, measured against a
// running release server with its demo shop (`cargo xtask bench recording`
// starts them and runs this after the ingest benchmark).
//
// 1. Storage per minute: a visitor uses the demo shop for BENCH_SHOP_SECONDS (mouse
//    moves, scrolling, typing into a field, single-page navigation, every few
//    seconds, as a shopper would); the bytes Rapport stored for the session
//    (`recordedBytes`, the gzip-compressed batches), per minute. Baseline in the
//    same run: the same events as uncompressed JSON (what storing them plainly
//    would cost). The figure is the ratio, and the bytes per minute.
// 2. Live-view lag: an agent watches the session live while the visitor adds a
//    marker to the page; the time until the agent's view holds it, p50 and p95
//    over BENCH_SAMPLES changes. Baseline in the same run: the same harness
//    seeing the marker in the visitor's own page (what observing costs). Target:
//    p95 at most 250 ms.
//
// Environment: BASE_URL, DEMO_URL, ADMIN_EMAIL, ADMIN_PASSWORD, API_TOKEN_FILE,
// CHROMIUM_PATH; BENCH_SHOP_SECONDS (default 60), BENCH_SAMPLES (default 40).
import { readFileSync } from 'node:fs';
import { chromium } from '@playwright/test';

const base = (process.env.BASE_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, '');
const demo = (process.env.DEMO_URL ?? 'http://127.0.0.1:3001').replace(/\/$/, '');
// A tenant API key, read from a file so that it is never on a command line.
const token = readFileSync(process.env.API_TOKEN_FILE, 'utf8').trim();
const seconds = Number(process.env.BENCH_SHOP_SECONDS ?? 60);
const samples = Number(process.env.BENCH_SAMPLES ?? 40);
const LAG_TARGET_MS = 250;

const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

async function rest(method, path, body) {
  const response = await fetch(`${base}/rest/v1${path}`, {
    method,
    headers: auth,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** The recorded session carrying `tag`, once it is listed. */
async function sessionTagged(tag) {
  for (let i = 0; i < 100; i++) {
    const listed = await rest('POST', '/session/recorded', { tagFilter: { tagsFilter: [tag] }, pageable: { pageSize: 1 } });
    if (listed.results[0]) return listed.results[0];
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no recorded session tagged ${tag}`);
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))];
}

/** A visitor on the demo shop, tagged before the loader runs. */
async function visitor(browser, tag) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript((t) => {
    window.Rapport = function () {
      (window.Rapport.q = window.Rapport.q || []).push(arguments);
    };
    window.Rapport('tag', t);
  }, tag);
  const page = await context.newPage();
  await page.goto(`${demo}/products.html`);
  const session = await sessionTagged(tag);
  await page.evaluate(() => {
    const label = document.createElement('label');
    label.append('Gift message ');
    const input = document.createElement('input');
    input.id = 'gift';
    label.append(input);
    document.querySelector('main').prepend(label);
  });
  return { context, page, session };
}

async function storagePerMinute(browser) {
  const { context, page, session } = await visitor(browser, `bench-storage-${Date.now()}`);
  const filters = ['Tea', 'Teaware', 'All'];
  const started = Date.now();
  for (let step = 0; Date.now() - started < seconds * 1000; step++) {
    for (let m = 0; m < 10; m++) await page.mouse.move(100 + ((step * 37 + m * 53) % 1000), 150 + ((step * 29 + m * 41) % 500));
    if (step % 2 === 0) await page.mouse.wheel(0, step % 4 === 0 ? 300 : -300);
    if (step % 3 === 0) await page.locator('#gift').type('x', { delay: 0 });
    if (step % 5 === 0) await page.getByRole('button', { name: filters[(step / 5) % 3], exact: true }).click();
    await page.waitForTimeout(1000);
  }
  const elapsedMinutes = (Date.now() - started) / 60_000;
  // Leave the page: the last batch goes out.
  await page.goto('about:blank');
  await new Promise((r) => setTimeout(r, 1500));
  const stored = (await sessionTagged(session.tags[0])).recordedBytes;
  const events = await fetch(`${base}/rest/v1/session/${session.id}/events`, { headers: auth }).then((r) => r.text());
  await context.close();
  const perMinute = stored / elapsedMinutes;
  const plainPerMinute = Buffer.byteLength(events) / elapsedMinutes;
  console.log(`1. Storage of a recorded session on the demo shop (${seconds} s of shopping)`);
  console.log(`  baseline: the same events as plain JSON   ${(plainPerMinute / 1024).toFixed(1)} KiB per minute`);
  console.log(`  stored by Rapport (gzip, per batch)        ${(perMinute / 1024).toFixed(1)} KiB per minute`);
  console.log(`  ratio: ${(perMinute / plainPerMinute).toFixed(3)}`);
}

async function liveLag(browser) {
  const { context, page, session } = await visitor(browser, `bench-live-${Date.now()}`);
  const agentContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const agent = await agentContext.newPage();
  await agent.goto(`${base}/login`);
  await agent.getByLabel('E-mail').fill(process.env.ADMIN_EMAIL);
  await agent.getByLabel('Password').fill(process.env.ADMIN_PASSWORD);
  await agent.getByRole('button', { name: 'Sign in' }).click();
  await agent.waitForURL((url) => !url.pathname.startsWith('/login'));
  await agent.goto(`${base}/sessions/${session.id}/live-view`);
  const live = agent.locator('[data-rapport-live]');
  await live.getByRole('status').filter({ hasText: 'Live' }).waitFor({ timeout: 20_000 });
  const frame = live.frameLocator('iframe');
  const add = (n) =>
    page.evaluate((n) => {
      const p = document.createElement('p');
      p.id = `mark-${n}`;
      p.textContent = `mark ${n}`;
      document.querySelector('main').append(p);
    }, n);
  const lags = [];
  const own = [];
  for (let n = 0; n < samples; n++) {
    const t0 = performance.now();
    await add(n);
    await page.locator(`#mark-${n}`).waitFor({ state: 'attached' });
    own.push(performance.now() - t0);
    await frame.locator(`#mark-${n}`).waitFor({ state: 'attached', timeout: 10_000 });
    lags.push(performance.now() - t0);
    await page.waitForTimeout(150);
  }
  await agentContext.close();
  await context.close();
  lags.sort((a, b) => a - b);
  own.sort((a, b) => a - b);
  const p95 = percentile(lags, 95);
  console.log(`2. Live-view lag, a change on the visitor's page to the agent's view (n = ${samples})`);
  console.log(`  baseline: seeing it in the visitor's own page  p50 ${percentile(own, 50).toFixed(1)} ms  p95 ${percentile(own, 95).toFixed(1)} ms`);
  console.log(`  in the agent's live view                        p50 ${percentile(lags, 50).toFixed(1)} ms  p95 ${p95.toFixed(1)} ms`);
  console.log(`  ratio p95: ${(p95 / percentile(own, 95)).toFixed(1)}; target p95 <= ${LAG_TARGET_MS} ms: ${p95 <= LAG_TARGET_MS ? 'met' : 'MISSED'}`);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  await storagePerMinute(browser);
  await liveLag(browser);
} finally {
  await browser.close();
}
