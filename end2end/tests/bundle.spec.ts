import { test, expect } from '@playwright/test';
import { hydrated, signIn } from './helpers';

/** The area a manifest key belongs to: `users_area_123` → `users`. */
const areaOf = (key: string) => key.replace(/_area_\d+$/, '');

// The first area a page shows arrives as one pack (`pkg/pack_<area>.bin`); an
// area reached later by navigation fetches only the modules still missing.
test('a page loads its area as one pack, and navigation fetches only the missing modules', async ({ page }) => {
  await signIn(page);
  const manifest: Record<string, string[]> = await (await page.request.get('/pkg/__wasm_split_manifest.json')).json();
  const modulesOf = (area: string) => {
    const key = Object.keys(manifest).find((k) => areaOf(k) === area);
    expect(key, `the manifest has an area ${area}`).toBeDefined();
    return manifest[key!].map((m) => `${m}.wasm`);
  };

  const fetched: string[] = [];
  page.on('request', (req) => {
    const file = new URL(req.url()).pathname.split('/').pop()!;
    if (/^(pack_|chunk_|split_)/.test(file)) fetched.push(file);
  });

  await page.goto('/settings/users');
  await hydrated(page);
  expect(fetched).toEqual([expect.stringMatching(/^pack_users_area_\d+\.bin$/)]);

  // Client-side navigation to another area: no pack, each missing module once.
  fetched.length = 0;
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Settings', level: 1 })).toBeVisible();
  const loaded = new Set(modulesOf('users'));
  const missing = modulesOf('settings').filter((m) => !loaded.has(m));
  expect(missing.length).toBeGreaterThan(0);
  expect([...fetched].sort()).toEqual([...missing].sort());

  // The page reached this way works: its links lead on within the app.
  await page.getByRole('main').getByRole('link', { name: /^Teams/ }).click();
  await expect(page.getByRole('heading', { name: 'Teams', level: 1 })).toBeVisible();
});
