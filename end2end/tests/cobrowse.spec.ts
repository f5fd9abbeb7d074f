import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Page } from '@playwright/test';
import { adminEmail, createApiKey, expectAccessible, signIn } from './helpers';

// Universal co-browsing: the host's link and the join link open one real
// Chromium on the server, whose screen both see. The site browsed here is a
// small one served by this test on loopback, which the test server's
// RAPPORT_WEBHOOK_ALLOW_PRIVATE_NETWORKS (127.0.0.0/8,::1) lets through; private
// and metadata addresses stay refused. Pages are told apart by their colour,
// read off the frames the participants' canvases show.

const page = (title: string, colour: string, body = '') => `<!doctype html>
<html><head><title>${title}</title><style>
  body { margin: 0; background: ${colour}; height: 100vh; font: 32px sans-serif; }
  #green { position: absolute; left: 0; top: 0; width: 400px; height: 200px; font-size: 32px; }
  input { position: absolute; left: 0; top: 260px; width: 400px; font-size: 32px; }
</style></head><body>${body}</body></html>`;

let site: Server;
let siteUrl = '';

test.beforeAll(async () => {
  site = createServer((req, res) => {
    if (req.url === '/blue') {
      res.setHeader('content-type', 'text/html');
      res.end(
        page(
          'Blue page',
          'rgb(0, 0, 255)',
          `<button id="green" onclick="document.body.style.background='rgb(0, 255, 0)'">Turn green</button>
           <input aria-label="Note" oninput="if (this.value === 'Hi') document.body.style.background = 'rgb(255, 255, 255)'">`,
        ),
      );
    } else if (req.url === '/report.csv') {
      res.setHeader('content-type', 'text/csv');
      res.setHeader('content-disposition', 'attachment; filename="report.csv"');
      res.end('a,b\n1,2\n');
    } else {
      res.setHeader('content-type', 'text/html');
      res.end(page('Red page', 'rgb(255, 0, 0)'));
    }
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await new Promise((resolve) => site.close(resolve));
});

/** The colour of the shared screen, as the participant's canvas shows it,
 * away from the test page's button and field. */
async function screenColour(p: Page): Promise<string> {
  return p.evaluate(() => {
    const canvas = document.querySelector<HTMLCanvasElement>('canvas.cobrowse-screen');
    if (!canvas || !canvas.width) return 'none';
    const [r, g, b] = canvas.getContext('2d')!.getImageData(canvas.width - 10, canvas.height - 10, 1, 1).data;
    // JPEG shifts colours a little: name the one that dominates.
    if (r > 180 && g < 80 && b < 80) return 'red';
    if (b > 180 && r < 80 && g < 80) return 'blue';
    if (g > 180 && r < 80 && b < 80) return 'green';
    if (r > 220 && g > 220 && b > 220) return 'white';
    return `rgb(${r}, ${g}, ${b})`;
  });
}

/** Clicks the shared screen at a point of the shared 1280×720 viewport. */
async function clickScreen(p: Page, x: number, y: number) {
  const screen = p.getByRole('application', { name: 'Shared browser' }).or(p.locator('canvas.cobrowse-screen')).first();
  const box = (await screen.boundingBox())!;
  await screen.click({ position: { x: (x / 1280) * box.width, y: (y / 720) * box.height } });
}

async function links(request: import('@playwright/test').APIRequestContext, token: string, url: string) {
  const created = await request.post('/rest/v1/cobrowsing/link', {
    headers: { Authorization: `Bearer ${token}` },
    data: { url, userEmail: adminEmail },
  });
  expect(created.status()).toBe(201);
  return (await created.json()) as { hostLink: string; joinLink: string; sessionId: string };
}

test('a host and a guest browse one page together, and control changes hands', async ({ page: admin, browser, request }) => {
  test.setTimeout(90_000);
  await signIn(admin);
  const token = await createApiKey(admin);
  const { hostLink, joinLink } = await links(request, token, `${siteUrl}/`);

  // The host opens the shared browser at the requested page, with control.
  const hostContext = await browser.newContext();
  const host = await hostContext.newPage();
  await host.goto(hostLink);
  await expect(host.getByRole('heading', { name: 'You are hosting this session' })).toBeVisible();
  await expect(host.getByText('You have control.', { exact: true })).toBeVisible({ timeout: 20_000 });
  await expect.poll(() => screenColour(host), { timeout: 15_000 }).toBe('red');

  // A guest joins and sees the same page; the host has control.
  const guestContext = await browser.newContext();
  const guest = await guestContext.newPage();
  await guest.goto(joinLink);
  await expect(guest.getByRole('heading', { name: 'You are joining a session' })).toBeVisible();
  await expect.poll(() => screenColour(guest), { timeout: 15_000 }).toBe('red');
  await expect(guest.getByText(/has control\.$/)).toBeVisible();
  await expect(guest.getByRole('textbox', { name: 'Address' })).toBeDisabled();
  await expect(host.getByRole('list', { name: 'Participants' })).toContainText('Guest 1');
  await expectAccessible(guest, true);

  // The host's pointer shows on the guest's screen.
  const hostScreen = host.locator('canvas.cobrowse-screen');
  const box = (await hostScreen.boundingBox())!;
  await host.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await host.mouse.move(box.x + box.width / 2 + 20, box.y + box.height / 2 + 10);
  await expect(guest.locator('.cobrowse-pointer-name')).toBeVisible();

  // The host navigates; the guest follows.
  const address = host.getByRole('textbox', { name: 'Address' });
  await address.fill(`${siteUrl}/blue`);
  await address.press('Enter');
  await expect.poll(() => screenColour(guest), { timeout: 15_000 }).toBe('blue');
  await expect(guest.getByRole('textbox', { name: 'Address' })).toHaveValue(`${siteUrl}/blue`);
  await expect(host.getByRole('button', { name: 'Back' })).toBeEnabled();

  // The host hands control to the guest, whose click changes the page.
  await host.getByRole('button', { name: 'Give control to Guest 1' }).click();
  await expect(guest.getByText('You have control.', { exact: true })).toBeVisible();
  await expect(host.getByText('Guest 1 has control.')).toBeVisible();
  await clickScreen(guest, 200, 100);
  await expect.poll(() => screenColour(host), { timeout: 15_000 }).toBe('green');
  await expect.poll(() => screenColour(guest), { timeout: 15_000 }).toBe('green');

  // The guest types into the page's field; typing "Hi" turns the page white.
  await clickScreen(guest, 200, 280);
  await guest.locator('canvas.cobrowse-screen').press('Shift+H');
  await guest.locator('canvas.cobrowse-screen').press('i');
  await expect.poll(() => screenColour(host), { timeout: 15_000 }).toBe('white');

  // The host takes control back, and the guest can no longer act.
  await host.getByRole('button', { name: 'Take back control' }).click();
  await expect(host.getByText('You have control.', { exact: true })).toBeVisible();
  await expect(guest.getByRole('textbox', { name: 'Address' })).toBeDisabled();

  // Addresses on private networks and the metadata service are refused.
  await address.fill('http://169.254.169.254/latest/meta-data/');
  await address.press('Enter');
  await expect(host.getByText(/refused to open 169\.254\.169\.254/)).toBeVisible();
  await expect(guest.getByText(/refused to open 169\.254\.169\.254/)).toBeVisible();
  await address.fill('http://10.0.0.7/');
  await address.press('Enter');
  await expect(host.getByText(/refused to open 10\.0\.0\.7/)).toBeVisible();
  // A link on the page to such an address is refused by the guard too: the
  // shared page stays where it was.
  await expect.poll(() => screenColour(guest)).toBe('white');

  // Downloads are refused with a clear message.
  await address.fill(`${siteUrl}/report.csv`);
  await address.press('Enter');
  await expect(host.getByText(/Downloads are turned off in co-browsing/)).toBeVisible();

  // Back goes to the previous page for everyone.
  await host.getByRole('button', { name: 'Back' }).click();
  await expect(guest.getByRole('textbox', { name: 'Address' })).toHaveValue(`${siteUrl}/`);
  await expect.poll(() => screenColour(guest), { timeout: 15_000 }).toBe('red');
  // And stays: a frame of the page before, captured earlier but compressed
  // later by the browser, never replaces it (the server orders frames by their
  // capture time; a busy machine brought this out).
  for (let i = 0; i < 5; i++) {
    await guest.waitForTimeout(200);
    expect(await screenColour(guest)).toBe('red');
    expect(await screenColour(host)).toBe('red');
  }

  // The host ends the session: the guest is told, and the links stop working.
  await host.getByRole('button', { name: 'End session' }).click();
  await expect(guest.getByText('The host ended the session.')).toBeVisible();
  await guest.goto(joinLink);
  await expect(guest.getByRole('heading', { name: 'This co-browsing link does not work' })).toBeVisible();
  await expect(guest.getByRole('alert')).toContainText('co-browsing session has ended');
  await hostContext.close();
  await guestContext.close();
});

test('a session nobody uses ends on its own', async ({ page: admin, browser, request }) => {
  test.setTimeout(90_000);
  await signIn(admin);
  const token = await createApiKey(admin);
  const { joinLink } = await links(request, token, `${siteUrl}/`);
  const context = await browser.newContext();
  const guest = await context.newPage();
  await guest.goto(joinLink);
  await expect.poll(() => screenColour(guest), { timeout: 20_000 }).toBe('red');
  // The test server ends sessions after 15 quiet seconds.
  await expect(guest.getByText('The session ended because nobody used it for a while.')).toBeVisible({
    timeout: 40_000,
  });
  await context.close();
});
