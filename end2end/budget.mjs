// The dashboard's performance budget, measured against a running server
// (`cargo xtask budget` starts a release build with demo data and runs this).
//
// 1. First load: the compressed bytes of a page's HTML and every CSS, JS and
//    wasm file it loads (those the HTML names, and the modules those scripts
//    import), as the server sends them to a browser that accepts Brotli and
//    gzip. Measured for the sign-in page (signed out), the start page, a
//    landing page of each role (inbox, a report, settings, the rule builder),
//    search, and the heaviest pages (system messages, webhooks and an
//    endpoint's page, appointments and a new one); each page's lazy code (its
//    area's pack) is among what its HTML preloads. Budget: 400 KB.
// 2. Time to first byte of server-rendered pages, signed in, p50 and p95 over
//    repeated requests, next to `/health` measured in the same run (a baseline
//    for the machine's noise). Budget: p50 under 20 ms.
//
// Environment: BASE_URL, ADMIN_EMAIL, ADMIN_PASSWORD; SAMPLES (default 40).
import http from 'node:http';

const base = new URL(process.env.BASE_URL ?? 'http://127.0.0.1:3000');
const samples = Number(process.env.SAMPLES ?? 40);
const FIRST_LOAD_BUDGET = 400 * 1024;
const TTFB_BUDGET_MS = 20;
const PAGES = [
  '/',
  '/inbox',
  '/links',
  '/reports',
  '/reports/agents',
  '/reports/chats',
  '/reports/visits',
  '/reports/script-errors',
  '/settings',
  '/settings/users',
  '/settings/teams',
  '/settings/webhooks',
  '/settings/audit',
];

/** One request; resolves with status, headers, raw (still compressed) body size and TTFB in ms. */
function get(path, headers = {}, method = 'GET', body) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    let ttfb;
    const req = http.request(
      { host: base.hostname, port: base.port, path, method, headers: { 'accept-encoding': 'br, gzip', ...headers } },
      (res) => {
        let bytes = 0;
        const chunks = [];
        res.on('data', (chunk) => {
          ttfb ??= Number(process.hrtime.bigint() - started) / 1e6;
          bytes += chunk.length;
          chunks.push(chunk);
        });
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, bytes, ttfb, body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

async function signIn() {
  const form = new URLSearchParams({ email: process.env.ADMIN_EMAIL, password: process.env.ADMIN_PASSWORD }).toString();
  // As the sign-in page's form sends it: Rapport refuses a sign-in no page of its own sent.
  const headers = { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(form), origin: base.origin };
  const res = await get('/auth/login', headers, 'POST', form);
  const cookie = [res.headers['set-cookie'] ?? []].flat().map((c) => c.split(';')[0]).join('; ');
  if (!cookie) throw new Error(`sign-in failed: ${res.status}`);
  return cookie;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function ttfb(path, headers) {
  for (let i = 0; i < 3; i++) await get(path, headers);
  const times = [];
  for (let i = 0; i < samples; i++) {
    const res = await get(path, headers);
    if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}`);
    times.push(res.ttfb);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

const cookie = await signIn();
const html = { cookie, accept: 'text/html' };

// First load.
const zlib = (await import('node:zlib')).default;
function decode(res) {
  const encoding = res.headers['content-encoding'];
  return encoding === 'br' ? zlib.brotliDecompressSync(res.body)
    : encoding === 'gzip' ? zlib.gunzipSync(res.body) : res.body;
}

/** The compressed bytes of `path` and everything it loads, as rows. */
async function firstLoad(path, headers) {
  const page = await get(path, headers);
  if (page.status !== 200) throw new Error(`${path}: HTTP ${page.status}`);
  const rows = [[`${path} (HTML)`, page.headers['content-encoding'] ?? 'identity', page.bytes]];
  // Preloaded: stylesheets, scripts, the main module and the area's pack (`.bin`).
  const queue = [...decode(page).toString().matchAll(/(?:href|src)="(\/[^"]+\.(?:css|js|wasm|bin))"/g)].map((m) => m[1]);
  const seen = new Set();
  while (queue.length) {
    const asset = queue.shift();
    if (seen.has(asset)) continue;
    seen.add(asset);
    const res = await get(asset, { cookie });
    rows.push([asset, res.headers['content-encoding'] ?? 'identity', res.bytes]);
    if (asset.endsWith('.js')) {
      // Static imports of other modules (the chunk loader), relative to this one.
      for (const m of decode(res).toString().matchAll(/(?:import|from)\s*["'](\.{1,2}\/[^"']+\.js)["']/g)) {
        queue.push(new URL(m[1], new URL(asset, base)).pathname);
      }
    }
  }
  return rows;
}

/** Adds a webhook endpoint as the dashboard's form does (the demo data has none), and returns its page. */
async function anEndpointPage() {
  const form = new URLSearchParams({ url: 'https://example.com/rapport-budget' }).toString();
  const headers = {
    cookie, origin: base.origin, accept: 'application/json',
    'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(form),
  };
  const res = await get('/api/create_webhook', headers, 'POST', form);
  if (res.status !== 200) throw new Error(`adding a webhook endpoint: HTTP ${res.status}`);
  return `/settings/webhooks/${JSON.parse(decode(res).toString()).webhook.id}`;
}

const loads = [];
// The sign-in page, signed out (signed in, it sends the user on); each role's
// landing page: the start page, the agents' inbox, a supervisor's report, an
// admin's settings page, the routing rules and the rule builder; then search,
// system messages, and the pages with the most code after those: webhooks
// (the list and an endpoint's page) and appointments (its calendar and a new
// appointment's form).
const firstPages = [
  ['/login', { accept: 'text/html' }],
  ...['/', '/inbox', '/reports/agents', '/settings/users', '/settings/routing-rules', '/settings/routing-rules/new',
    '/search', '/settings/system-messages', '/settings/webhooks', await anEndpointPage(), '/appointments',
    '/appointments/new'].map((path) => [path, html]),
];
for (const [path, headers] of firstPages) {
  const rows = await firstLoad(path, headers);
  const total = rows.reduce((sum, r) => sum + r[2], 0);
  loads.push(total);
  console.log(`First load of ${path} (compressed bytes on the wire)`);
  for (const [name, encoding, bytes] of rows) console.log(`  ${name.padEnd(48)} ${encoding.padEnd(9)} ${(bytes / 1024).toFixed(1).padStart(8)} KB`);
  console.log(`  ${'total'.padEnd(58)} ${(total / 1024).toFixed(1).padStart(8)} KB (budget ${FIRST_LOAD_BUDGET / 1024} KB)\n`);
}
const total = Math.max(...loads);

// Time to first byte.
const health = await ttfb('/health', {});
console.log(`\nTime to first byte, ${samples} requests each, signed in as an admin (ms)`);
console.log(`  ${'page'.padEnd(22)} ${'p50'.padStart(7)} ${'p95'.padStart(7)} ${'p50 / health'.padStart(13)}`);
console.log(`  ${'/health (baseline)'.padEnd(22)} ${health.p50.toFixed(2).padStart(7)} ${health.p95.toFixed(2).padStart(7)} ${'1.0×'.padStart(13)}`);
let slow = [];
for (const path of PAGES) {
  const t = await ttfb(path, html);
  if (t.p50 >= TTFB_BUDGET_MS) slow.push(path);
  console.log(`  ${path.padEnd(22)} ${t.p50.toFixed(2).padStart(7)} ${t.p95.toFixed(2).padStart(7)} ${`${(t.p50 / health.p50).toFixed(1)}×`.padStart(13)}`);
}

const verdicts = [
  [`first load ≤ ${FIRST_LOAD_BUDGET / 1024} KB`, total <= FIRST_LOAD_BUDGET],
  [`TTFB p50 < ${TTFB_BUDGET_MS} ms on every page`, slow.length === 0],
];
console.log('');
for (const [name, ok] of verdicts) console.log(`  ${ok ? 'met   ' : 'MISSED'} ${name}${!ok && slow.length && name.startsWith('TTFB') ? ` (${slow.join(', ')})` : ''}`);
process.exit(verdicts.every(([, ok]) => ok) ? 0 : 1);
