import { expect, Route, test } from '@playwright/test';
import { hydrated, signIn } from './helpers';

// A click on a button that needs the app, made while the app is still loading,
// is kept and carried out once the page has hydrated (app/src/early_events.js).
test('a click made before hydration is carried out after it', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await signIn(page);

  // Hold the app's code (not its style) back until the click has been made.
  const held: Route[] = [];
  let holding = true;
  const code = (url: URL) => url.pathname.startsWith('/pkg/') && !url.pathname.endsWith('.css');
  await page.route(code, (route) => (holding ? held.push(route) : route.continue()));
  await page.goto('/settings/workspace', { waitUntil: 'domcontentloaded' });
  // Its name turns from "Copy widget key" into "Copied widget key".
  const copy = page.getByRole('button', { name: /^Cop(y|ied) widget key$/ });
  await copy.click();
  expect(await page.evaluate(() => document.documentElement.dataset.hydrated)).toBeUndefined();
  await expect(copy).toHaveText(/^Copy/);

  holding = false;
  for (const route of held) await route.continue();
  await hydrated(page);
  await expect(copy).toHaveText(/^Copied/);
  const key = await page.getByRole('textbox', { name: 'widget key' }).inputValue();
  expect(key).not.toBe('');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
});
