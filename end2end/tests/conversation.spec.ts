// The visitor's side of a conversation beyond its messages, in the order a
// visitor and an agent meet it: the rating once it is closed, typing and read
// marks both ways, and a transcript by mail.
import { expect, test } from '@playwright/test';
import { expectAccessible, hydrated, openSettings, signIn } from './helpers';
import { connectShop, dialog, ids, launcher, log, openDemo, shop, visitor, write } from './shop';

test.beforeAll(async ({ browser }) => connectShop(browser));

test('a visitor rates the conversation once the agent closes it, and the agent sees the rating', async ({ browser, page: agent }) => {
  test.setTimeout(90_000);
  const { context, page, errors } = await visitor(browser);
  const name = `Rita ${Date.now()}`;
  await openDemo(page);
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  await page.evaluate((n) => (window as any).Rapport('identify', { firstName: n }), name);
  await launcher(page).click();
  await write(page, 'Where is my parcel?');
  // While the conversation is open, nobody asks for a rating.
  const question = dialog(page).getByRole('form', { name: 'How was this conversation?' });
  await expect(question).toBeHidden();

  // The agent answers and marks it done.
  await signIn(agent);
  await agent.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Inbox' }).click();
  await hydrated(agent);
  await agent.getByRole('link', { name: new RegExp(name) }).click();
  await agent.getByLabel('Reply').fill('It arrives tomorrow morning.');
  await agent.getByRole('button', { name: 'Send', exact: true }).click();
  await expect(log(page).getByText('It arrives tomorrow morning.')).toBeVisible();
  await agent.getByRole('button', { name: 'Mark done' }).click();

  // The visitor is asked at once, picks four stars with the mouse and the
  // keyboard's arrow keys, and adds a comment.
  await expect(question).toBeVisible();
  await question.getByRole('button', { name: 'Send rating' }).click();
  await expect(question.getByRole('status')).toHaveText('Pick a rating from 1 to 5 first.');
  // A click on the third star chooses it; the arrow key moves to the fourth.
  await question.locator('label.star').nth(2).click();
  await expect(question.getByRole('radio', { name: '3 of 5' })).toBeChecked();
  await page.keyboard.press('ArrowRight');
  await expect(question.getByRole('radio', { name: '4 of 5' })).toBeChecked();
  await question.getByLabel('Anything to add? (optional)').fill('Quick and friendly.');
  await expectAccessible(page);
  await question.getByRole('button', { name: 'Send rating' }).click();
  await expect(dialog(page).getByText('Thank you for your rating!')).toBeVisible();

  // The agent's open conversation shows it, without a reload.
  await expect(agent.getByText('Rated 4 of 5 by the visitor')).toBeVisible();
  await expect(agent.getByText('Quick and friendly.')).toBeVisible();
  expect(errors).toEqual([]);
  await context.close();

  // An admin can switch the question off under Settings → Workspace (and on
  // again here, for the tests after this one).
  await openSettings(agent, 'Workspace');
  await hydrated(agent);
  const ask = agent.getByLabel('Ask visitors to rate closed conversations');
  await expect(ask).toBeChecked();
  for (const on of [false, true]) {
    await ask.setChecked(on);
    await agent.getByRole('button', { name: 'Save conversation settings' }).click();
    await expect(agent.getByRole('status').filter({ hasText: 'Saved.' }).first()).toBeVisible();
    // The second round's "Saved." may still be the first one's: the stored
    // setting is what tells that this save landed.
    await expect
      .poll(async () => (await (await agent.request.get('/rest/v1/workspace', { headers: shop.auth })).json()).csatEnabled)
      .toBe(on);
  }
});

test('each side sees the other typing, and what the other has read', async ({ browser, page: agent }) => {
  test.setTimeout(90_000);
  const { context, page, errors } = await visitor(browser);
  const name = `Tove ${Date.now()}`;
  await openDemo(page);
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  await page.evaluate((n) => (window as any).Rapport('identify', { firstName: n }), name);
  await launcher(page).click();
  await write(page, 'Do you ship to Oslo?');
  const asked = log(page).locator('.msg', { hasText: 'Do you ship to Oslo?' });
  await expect(asked.getByText('Seen')).toBeHidden();

  // The agent opens the conversation: the visitor's message is seen.
  await signIn(agent);
  await agent.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Inbox' }).click();
  await hydrated(agent);
  await agent.getByRole('link', { name: new RegExp(name) }).click();
  await expect(agent.getByRole('list', { name: 'Messages' }).getByText('Do you ship to Oslo?')).toBeVisible();
  await expect(asked.getByText('Seen')).toBeVisible();
  const live = agent.locator('.live-state.ok');
  await expect(live).toBeVisible();

  // The visitor types: the agent reads the draft as it grows.
  const box = dialog(page).getByRole('textbox', { name: 'Your message' });
  await box.fill('And to Berg');
  await expect(agent.getByText('The visitor is typing:')).toBeVisible();
  await expect(agent.locator('.typing-notes q')).toHaveText('And to Berg');
  await box.fill('And to Bergen, too?');
  await expect(agent.locator('.typing-notes q')).toHaveText('And to Bergen, too?');
  // Emptied, the note goes.
  await box.fill('');
  await expect(agent.getByText('The visitor is typing:')).toBeHidden();

  // The agent types: the visitor sees it, until the answer arrives.
  const typing = dialog(page).getByRole('status').filter({ hasText: /is typing…/ });
  await agent.getByLabel('Reply').fill('We do, in two');
  await expect(typing).toBeVisible();
  await agent.getByLabel('Reply').fill('We do, in two days.');
  await agent.getByRole('button', { name: 'Send', exact: true }).click();
  await expect(log(page).getByText('We do, in two days.')).toBeVisible();
  await expect(typing).toBeHidden();

  // The visitor had the chat open: the agent sees the answer was seen.
  const answer = agent.getByRole('list', { name: 'Messages' }).locator('li', { hasText: 'We do, in two days.' });
  await expect(answer.getByText('Seen')).toBeVisible();
  await expectAccessible(page);

  // Switched off under Settings → Workspace, drafts stay with the visitor.
  await openSettings(agent, 'Workspace');
  await hydrated(agent);
  await agent.getByLabel('Show agents what visitors type before they send it').setChecked(false);
  await agent.getByRole('button', { name: 'Save conversation settings' }).click();
  await expect(agent.getByRole('status').filter({ hasText: 'Saved.' }).first()).toBeVisible();
  await agent.goto(`/inbox/${(await ids(page)).customerId}`);
  await hydrated(agent);
  await expect(live).toBeVisible();
  await box.fill('My card number is');
  await expect(agent.getByText('The visitor is typing…')).toBeVisible();
  await expect(agent.getByText('My card number is')).toBeHidden();
  const on = await agent.request.put('/rest/v1/workspace', { headers: shop.auth, data: { typingPreview: true } });
  expect(on.status()).toBe(200);
  expect(errors).toEqual([]);
  await context.close();
});

test('a visitor mails themselves the conversation, and the admin finds it in the outbox', async ({ browser, page: admin }) => {
  test.setTimeout(60_000);
  const { context, page, errors } = await visitor(browser);
  const name = `Ines ${Date.now()}`;
  await openDemo(page);
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  await page.evaluate((n) => (window as any).Rapport('identify', { firstName: n }), name);
  await launcher(page).click();
  await write(page, 'Please send me the order details.');

  const copy = dialog(page).getByRole('form', { name: 'Email me this conversation' });
  await copy.getByRole('button', { name: 'Email me this conversation' }).click();
  const address = `ines.${Date.now()}@example.com`;
  await copy.getByLabel('Send the copy to').fill(address);
  await expectAccessible(page);
  await copy.getByRole('button', { name: 'Send copy' }).click();
  await expect(copy.getByRole('status')).toHaveText(`A copy of this conversation is on its way to ${address}.`);
  // Asking again at once is refused, and says why.
  await copy.getByRole('button', { name: 'Email me this conversation' }).click();
  await copy.getByLabel('Send the copy to').fill(address);
  await copy.getByRole('button', { name: 'Send copy' }).click();
  await expect(copy.getByRole('status')).toHaveText('A copy was sent a moment ago. Please try again in a few minutes.');
  expect(errors.filter((e) => !/429/.test(e))).toEqual([]);
  await context.close();

  // The transcript waits in the outbox (this server has no SMTP).
  await signIn(admin);
  await openSettings(admin, 'Mail outbox');
  const mail = admin.locator('.mail-list li').filter({ hasText: address });
  await expect(mail).toContainText('Your conversation with');
  await mail.locator('summary').click();
  await expect(mail.locator('.mail-body')).toContainText('You: Please send me the order details.');
});

test('a reply to a visitor who left goes by mail, and its link continues the chat', async ({ browser, page: agent }) => {
  test.setTimeout(180_000);
  // The shortest wait the workspace allows: one minute.
  const minutes = async (n: number) => {
    const set = await agent.request.put('/rest/v1/workspace', { headers: shop.auth, data: { replyByMailMinutes: n } });
    expect(set.status()).toBe(200);
  };
  await minutes(1);
  const { context, page } = await visitor(browser);
  const name = `Nora ${Date.now()}`;
  await openDemo(page);
  await expect(launcher(page)).toBeVisible({ timeout: 15_000 });
  await page.evaluate((n) => (window as any).Rapport('identify', { firstName: n }), name);
  await launcher(page).click();
  await write(page, 'Is the Kyusu pot dishwasher safe?');
  const { customerId } = await ids(page);
  const address = `nora.${Date.now()}@example.com`;
  const put = await agent.request.put(`/rest/v1/customer/${customerId}`, {
    headers: shop.auth,
    data: { firstName: name, email: address },
  });
  expect(put.status()).toBe(200);
  // The visitor leaves before the answer.
  await context.close();

  await signIn(agent);
  await agent.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Inbox' }).click();
  await hydrated(agent);
  await agent.getByRole('link', { name: new RegExp(name) }).click();
  await agent.getByLabel('Reply').fill('Better by hand: the glaze lasts longer.');
  await agent.getByRole('button', { name: 'Send', exact: true }).click();

  // A minute later nobody has seen it: it goes by mail, with a link.
  await openSettings(agent, 'Mail outbox');
  await expect(agent.getByRole('heading', { name: 'Mail outbox', level: 1 })).toBeVisible();
  const mail = agent.locator('.mail-list li').filter({ hasText: address });
  await expect(async () => {
    await agent.goto('/settings/outbox');
    await expect(mail).toBeVisible({ timeout: 1_000 });
  }).toPass({ timeout: 120_000, intervals: [5_000] });
  await mail.locator('summary').click();
  const body = await mail.locator('.mail-body').innerText();
  expect(body).toContain('Better by hand: the glaze lasts longer.');
  const link = body.match(/https?:\/\/\S+\/chat\/\S+/)![0];
  await minutes(5);

  // On another device the link asks first, then opens the chat where it was.
  const later = await visitor(browser);
  await later.page.goto(link);
  await later.page.getByRole('button', { name: 'Continue the conversation' }).click();
  await expect(dialog(later.page)).toBeVisible({ timeout: 15_000 });
  await expect(log(later.page).getByText('Is the Kyusu pot dishwasher safe?')).toBeVisible();
  await expect(log(later.page).getByText('Better by hand: the glaze lasts longer.')).toBeVisible();
  await write(later.page, 'Thank you!');
  expect(later.errors).toEqual([]);
  await later.context.close();
});
