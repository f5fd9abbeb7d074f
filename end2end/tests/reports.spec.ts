import { expect, Locator, test } from '@playwright/test';
import * as fs from 'fs';
import { expectAccessible, hydrated, screenshot, signIn } from './helpers';

// `cargo xtask test` loads ten days of demo history into the default workspace.
const families: [string, string][] = [
  ['agents', 'Agents'],
  ['chats', 'Chats'],
  ['messages', 'Messages'],
  ['sessions', 'Sessions'],
  ['visits', 'Visits'],
  ['cobrowse', 'Co-browsing'],
  ['conferences', 'Conferences'],
  ['rules', 'Rules and SLA'],
  ['resources', 'Resources'],
  ['script-errors', 'Script errors'],
];

/** How many pixels of a canvas are not white: axes, labels, lines and bars. */
async function inkedPixels(canvas: Locator): Promise<number> {
  return canvas.evaluate((element: HTMLCanvasElement) => {
    const data = element.getContext('2d')!.getImageData(0, 0, element.width, element.height).data;
    let inked = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] < 240 || data[i + 1] < 240 || data[i + 2] < 240) inked++;
    return inked;
  });
}

test('a supervisor opens every report page and downloads its CSV', async ({ page }) => {
  test.setTimeout(120_000);
  await signIn(page);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reports' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Reports');
  for (const [slug, title] of families) {
    await page.goto(`/reports/${slug}?grouping=LAST_MONTH`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(title);
    await expect(page.getByRole('table').last()).toBeVisible();
    await hydrated(page);
    // Live, the charts are drawn again on a canvas, in place of the server's SVG.
    const canvas = page.locator('figure.chart canvas').first();
    await expect(canvas).toBeVisible();
    await expect(page.locator('figure.chart .chart-svg').first()).toBeHidden();
    expect(await inkedPixels(canvas), 'the canvas has a chart on it').toBeGreaterThan(1000);
    await expectAccessible(page);
    await screenshot(page, `report-${slug}`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`rapport-${slug}-last_month.csv`);
    const csv = fs.readFileSync(await download.path(), 'utf8');
    expect(csv.split('\n').length).toBeGreaterThan(2);
  }
});

test('the period and per-agent pickers change the report', async ({ page }) => {
  await signIn(page);
  await page.goto('/reports/agents');
  await hydrated(page);
  await page.getByLabel('Period', { exact: true }).selectOption('LAST_MONTH');
  await page.getByLabel('Per agent', { exact: true }).selectOption({ label: 'Online time' });
  await page.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL(/grouping=LAST_MONTH/);
  await expect(page).toHaveURL(/by_agent=ONLINE_TIME/);
  await expect(page.getByText('Online time per agent (seconds)')).toBeVisible();
  // A column per demo agent, and a summary against the previous month.
  await expect(page.getByRole('columnheader', { name: /Demo Agent 1/ })).toBeVisible();
  await expect(page.getByText(/previous: /).first()).toBeVisible();
  await expectAccessible(page);
  await screenshot(page, 'report-agents-per-agent');
});
