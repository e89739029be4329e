import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium, which the browser tests drive through playwright-core. */
export const CHROMIUM = '/usr/bin/chromium';

/** Skip the browser tests where Chromium is missing, except in CI (there it must be installed). */
export const skipWithoutChromium = !existsSync(CHROMIUM) && !process.env['CI'];

/** Launches headless Chromium with the flags every browser test uses (no sandbox, no network chatter). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}
