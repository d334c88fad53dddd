import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { chromium, Browser, BrowserContext, Page } from 'playwright-core';
import { buildConsole } from '../../console/build';
import { scratchDir } from './scratch-dir';

/**
 * What the console's browser specs (test/console*.browser.e2e.spec.ts) share: Debian's chromium driven by
 * playwright-core (no browser download), a 1366x800 page, the page errors and console errors it logs, and the
 * helpers the specs use on it (screenshots, navigation, sign-in, the page's storage, an axe-core check).
 * `CONSOLE_SCREENSHOTS=1` (npm run console:screenshots) writes the screenshots to docs/console/.
 */
export const CHROMIUM =
  process.env.CHROMIUM_PATH ?? (['/usr/bin', ...(process.env.PATH ?? '').split(':')].map((d) => join(d, 'chromium')).find((p) => existsSync(p)) || '/usr/bin/chromium');
export const SHOTS = process.env.CONSOLE_SCREENSHOTS ? join(__dirname, '..', '..', 'docs', 'console') : undefined;

/** `describe`, or `describe.skip` with a line saying why when there is no Chromium; `spec` is the spec's `__filename`. */
export function browserSuite(spec: string): jest.Describe {
  if (existsSync(CHROMIUM)) return describe;
  process.stdout.write(`SKIPPED ${relative(join(__dirname, '..', '..'), spec)}: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)\n`);
  return describe.skip;
}

/** Builds the console into a fresh temp dir (`ars-console-<label>-…`, removed when the spec file ends), for CONSOLE_DIR. */
export function buildConsoleDir(label?: string): Promise<string> {
  return buildConsole(scratchDir(label ? `ars-console-${label}-` : 'ars-console-'));
}

/** Failed loads the pages cause on purpose (a probe's 400, a list's 403), which `defects()` leaves out by default. */
const REFUSALS = /status of (400|401|403|404|409|502)/;
const AXE_RUN = `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((r) => JSON.stringify(r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.impact + ' ' + v.id + ' at ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', '))))`;

export interface ConsoleBrowserOptions {
  /** Grant clipboard-read and clipboard-write to the app's origin (a "Copy" button is tested). */
  clipboard?: boolean;
  /** Console error messages not recorded in `problems` at all (e.g. the 401 of a sign-in with a bad key). */
  ignore?: RegExp;
  /** Problems `defects()` leaves out; by default the refusals of 400, 401, 403, 404, 409 and 502. */
  refusals?: RegExp;
  /** `open(hash)` also waits for the page's heading (level 1). */
  openWaitsForHeading?: boolean;
  /** Screenshots of the whole page rather than the 1366x800 viewport. */
  fullPage?: boolean;
}

export interface ConsoleBrowser {
  /** Page errors and console errors, in order: a CSP violation or a script error is a defect whatever the page shows. */
  readonly problems: string[];
  /** Starts the browser against the app at `url`: a 1366x800 page with a 10 s default timeout. */
  launch(url: string): Promise<{ browser: Browser; context: BrowserContext; page: Page }>;
  close(): Promise<void>;
  /** A screenshot to docs/console/<name>.png when CONSOLE_SCREENSHOTS is set. */
  shot(name: string): Promise<void>;
  /** Goes to the console at `hash` (e.g. '#/agents'). */
  open(hash: string): Promise<void>;
  /** Signs out if signed in, then signs in with the API key. */
  signIn(key: string): Promise<void>;
  /** sessionStorage and localStorage, as JSON, to check a secret was not kept. */
  storage(): Promise<string>;
  /** `problems` but the refusals the pages cause on purpose. */
  defects(): string[];
  /** The serious and critical WCAG 2 A/AA violations axe-core finds on the page as it is, each prefixed with `label`. */
  axe(label: string): Promise<string[]>;
  /** `open(hash)`, then `axe(hash)`. */
  axeAt(hash: string): Promise<string[]>;
}

/** The browser and its helpers; the helpers may be taken apart at `describe` time, `launch(url)` goes in `beforeAll`. */
export function consoleBrowser(options: ConsoleBrowserOptions = {}): ConsoleBrowser {
  const problems: string[] = [];
  let browser: Browser | undefined;
  let page: Page;
  let url: string;
  const self: ConsoleBrowser = {
    problems,
    async launch(appUrl) {
      url = appUrl;
      if (SHOTS) mkdirSync(SHOTS, { recursive: true });
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
      const context = await browser.newContext({ viewport: { width: 1366, height: 800 } });
      if (options.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
      page = await context.newPage();
      page.setDefaultTimeout(10_000);
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => m.type() === 'error' && !options.ignore?.test(m.text()) && problems.push(`console: ${m.text()}`));
      return { browser, context, page };
    },
    async close() {
      await browser?.close();
    },
    async shot(name) {
      if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: options.fullPage ?? false });
    },
    async open(hash) {
      await page.goto(`${url}/console/${hash}`);
      if (options.openWaitsForHeading) await page.getByRole('heading', { level: 1 }).waitFor();
    },
    async signIn(key) {
      await page.goto(`${url}/console/`);
      if (await page.getByRole('button', { name: 'Sign out' }).count()) await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API key', { exact: true }).fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Sections' }).waitFor();
    },
    async storage() {
      return (await page.evaluate('JSON.stringify(sessionStorage) + JSON.stringify(localStorage)')) as string;
    },
    defects() {
      const refusals = options.refusals ?? REFUSALS;
      return problems.filter((p) => !refusals.test(p));
    },
    async axe(label) {
      await page.waitForLoadState('networkidle').catch(() => undefined);
      // Evaluated through the browser's debugging protocol: the page's CSP (script-src 'self') does not apply.
      if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
      const violations = JSON.parse((await page.evaluate(AXE_RUN)) as string) as string[];
      return violations.map((v) => `${label}: ${v}`);
    },
    async axeAt(hash) {
      await self.open(hash);
      return self.axe(hash);
    },
  };
  return self;
}
