import { expect, test } from '@playwright/test';
import * as http from 'http';
import { AddressInfo } from 'net';
import { Webhook } from 'standardwebhooks';
import { expectAccessible, hydrated, openSettings, screenshot, signIn } from './helpers';

/** A real HTTP receiver on loopback that records every request it gets. */
async function receiver() {
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('thanks');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  // The endpoint subscribes to all events of the workspace, which the other
  // specs share: a timer one of them left (an SLA, a queue wait) may fire an
  // event while this spec runs. Its own deliveries are the test events.
  const tests = () => received.filter((r) => r.headers['rapport-event-type'] === 'webhook.test');
  return { url: `http://127.0.0.1:${port}/rapport`, tests, close: () => server.close() };
}

test('an admin subscribes an endpoint, sends a test event and replays it', async ({ page }) => {
  const hook = await receiver();
  try {
    await signIn(page);
    await openSettings(page, 'Webhooks');
    await expect(page.getByRole('heading', { name: 'Webhooks', level: 1 })).toBeVisible();
    await hydrated(page);

    // The server's validation is shown at the field.
    await page.getByLabel('Endpoint URL').fill('ftp://files.example.com/in');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(page.locator('#webhook-url-error')).toBeVisible();
    await expect(page.getByLabel('Endpoint URL')).toHaveAttribute('aria-invalid', 'true');

    await page.getByLabel('Endpoint URL').fill(hook.url);
    await page.getByLabel('Description (optional)').fill('E2E receiver');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secretField = page.locator('.secret .copy-value');
    await expect(secretField).toBeVisible();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_/);
    await expect(page.getByRole('row', { name: new RegExp(hook.url) })).toContainText('All events');
    await expectAccessible(page);
    await screenshot(page, 'webhooks');

    await page.getByRole('link', { name: 'Open the endpoint and send a test event' }).click();
    await expect(page.getByRole('heading', { level: 1 })).toContainText(hook.url);
    await hydrated(page);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'queued' })).toBeVisible();

    // The receiver gets the event, signed with the secret shown once.
    await expect.poll(() => hook.tests().length, { timeout: 20_000 }).toBe(1);
    const first = hook.tests()[0];
    new Webhook(secret).verify(first.body, first.headers as Record<string, string>);
    expect(first.headers['rapport-event-type']).toBe('webhook.test');

    // The log follows the delivery without a reload.
    const row = page.getByRole('row', { name: /webhook\.test/ });
    await expect(row).toContainText('HTTP 200', { timeout: 15_000 });
    await expectAccessible(page);
    await screenshot(page, 'webhook-endpoint');

    await row.getByRole('button', { name: /^Replay webhook\.test/ }).click();
    await expect.poll(() => hook.tests().length, { timeout: 20_000 }).toBe(2);
    const replayed = hook.tests()[1];
    // A replay carries the original webhook-id, so receivers can deduplicate.
    expect(replayed.headers['webhook-id']).toBe(first.headers['webhook-id']);
    new Webhook(secret).verify(replayed.body, replayed.headers as Record<string, string>);
    await expect(page.getByRole('row', { name: /webhook\.test/ })).toHaveCount(2, { timeout: 15_000 });

    // Unsaved edits are guarded: following a link asks first, and saving clears the guard.
    await page.getByLabel('Description (optional)').fill('Renamed receiver');
    let asked = '';
    page.once('dialog', (dialog) => {
      asked = dialog.message();
      void dialog.dismiss();
    });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    expect(asked).toContain('unsaved changes');
    await expect(page.getByRole('heading', { level: 1 })).toContainText(hook.url);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Saved.' })).toBeVisible();
    await expect(page.getByLabel('Description (optional)')).toHaveValue('Renamed receiver');

    // Deleting asks first, then returns to the list.
    await page.getByText('Delete this endpoint…').click();
    await page.getByRole('button', { name: 'Delete permanently' }).click();
    await expect(page.getByRole('heading', { name: 'Webhooks', level: 1 })).toBeVisible();
    await expect(page.getByRole('row', { name: new RegExp(hook.url) })).toHaveCount(0);
  } finally {
    hook.close();
  }
});
