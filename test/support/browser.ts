// A real browser for the dashboard's e2e tests: Debian's `chromium` package (installed by
// `make browser`, which `make test` runs first), driven by playwright-core. Nothing is ever
// downloaded: playwright-core is only told where the system's binary is. Each file gets a fresh,
// empty profile in a temporary directory, removed again after its tests.
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from 'otplib';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

// playwright-core never downloads on its own; this keeps any tool started from a test from trying.
process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Test artefacts (kept after the run; .run/ is git-ignored). */
export const SCREENSHOT_DIR = join(ROOT, '.run/test-results/screenshots');

/** Where Debian (chromium) and Ubuntu/older Debian (chromium-browser) put the browser. */
export const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

const INSTALL_HINT = 'Install it with `make browser` (as root), or `sudo apt-get install -y chromium`.';

const executable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The Chromium binary to drive: CHROMIUM_PATH when set, else the first system one found. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env, candidates: readonly string[] = CHROMIUM_CANDIDATES): string {
  const chosen = env.CHROMIUM_PATH?.trim();
  if (chosen) {
    if (!executable(chosen)) throw new Error(`CHROMIUM_PATH is ${chosen}, which is not an executable file. ${INSTALL_HINT}`);
    return chosen;
  }
  const found = candidates.find(executable);
  if (!found) throw new Error(`Chromium is not installed (looked for ${candidates.join(' and ')}; CHROMIUM_PATH is not set). ${INSTALL_HINT}`);
  return found;
}

/** The flags of every run: headless, no sandbox (containers, root), and nothing that phones home. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const VIEWPORTS = {
  desktop: { width: 1280, height: 900 },
  narrow: { width: 390, height: 844 },
} as const;
export type ViewportName = keyof typeof VIEWPORTS;

export interface BrowserSession {
  /** One browser context (one cookie jar) on a fresh profile. */
  readonly context: BrowserContext;
  /** A new tab at the given viewport. */
  open(viewport?: ViewportName): Promise<Page>;
  /** Closes the browser and removes its profile; safe to call twice. */
  close(): Promise<void>;
}

/** Starts Chromium on a fresh, empty profile directory. */
export async function launchBrowser(): Promise<BrowserSession> {
  const executablePath = chromiumPath();
  const profile = mkdtempSync(join(tmpdir(), 'gw-chromium-'));
  if (readdirSync(profile).length !== 0) throw new Error(`the new profile directory ${profile} is not empty`);
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: VIEWPORTS.desktop,
      locale: 'en-GB',
      timezoneId: 'UTC',
    });
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
  // The first tab a persistent context opens with: closed, so every page is opened at a known viewport.
  for (const page of context.pages()) await page.close();
  let closed = false;
  return {
    context,
    async open(viewport: ViewportName = 'desktop') {
      const page = await context.newPage();
      await page.setViewportSize(VIEWPORTS[viewport]);
      return page;
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await context.close();
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
    },
  };
}

/** A browser for the file's tests: launched before them, closed (and its profile removed) after them, failed or not. */
export function useBrowser(): { readonly session: BrowserSession } {
  let session: BrowserSession | undefined;
  beforeAll(async () => {
    session = await launchBrowser();
  });
  afterAll(async () => {
    await session?.close();
  });
  return {
    get session() {
      if (!session) throw new Error('the browser is not started yet');
      return session;
    },
  };
}

/**
 * Full-page screenshots of one test, numbered in the order taken:
 * `.run/test-results/screenshots/<test>/<nn>-<name>.png`. The test's folder starts empty.
 */
export class Screenshots {
  readonly dir: string;
  readonly taken: string[] = [];
  private count = 0;

  constructor(test: string) {
    this.dir = join(SCREENSHOT_DIR, slug(test));
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
  }

  /** Saves the page as it is now; returns the file's path. */
  async take(page: Page, name: string): Promise<string> {
    this.count += 1;
    const path = join(this.dir, `${String(this.count).padStart(2, '0')}-${slug(name)}.png`);
    await page.screenshot({ path, fullPage: true, animations: 'disabled' });
    this.taken.push(path);
    return path;
  }

  /** The same page again at the narrow viewport (a phone), then back to the size it had. */
  async takeNarrow(page: Page, name: string): Promise<string> {
    const before = page.viewportSize() ?? VIEWPORTS.desktop;
    await page.setViewportSize(VIEWPORTS.narrow);
    try {
      return await this.take(page, `${name}-narrow`);
    } finally {
      await page.setViewportSize(before);
    }
  }
}

const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'page';

/** The current code of an authenticator app holding this key (otplib's defaults: SHA-1, 6 digits, 30 s). */
export const totpCode = (secret: string): Promise<string> => generate({ secret });
