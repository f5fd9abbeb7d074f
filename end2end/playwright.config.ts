import { defineConfig } from '@playwright/test';

// `cargo xtask test` starts a fresh server and sets BASE_URL, ADMIN_EMAIL and
// ADMIN_PASSWORD. Playwright's own browser download cannot work here, so the tests
// drive Debian's Chromium.
const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  // One server with shared accounts: run the specs one after another.
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  outputDir: './test-results',
  use: {
    baseURL: process.env.BASE_URL ?? 'http://127.0.0.1:3000',
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: chromiumArgs,
    },
    screenshot: 'only-on-failure',
    trace: 'off',
  },
});
