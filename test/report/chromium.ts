/**
 * Test and bench helper for the report stage: launches Debian's chromium through playwright-core
 * with the flags of DESIGN.md §3 and a fresh profile, and records console errors and page errors.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
/** Why browser tests skip, or null when they can run. */
export const CHROMIUM_MISSING: string | null = existsSync(CHROMIUM) ? null : `${CHROMIUM} is absent: install it with \`apt-get install -y chromium\` (.ci/run does)`;

export interface Browser {
  context: BrowserContext;
  /** Console messages of type "error" and uncaught page errors, across every page opened. */
  errors: string[];
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

export async function launchChromium(viewport = { width: 1280, height: 900 }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "merit-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
  });
  const errors: string[] = [];
  const watch = (page: Page) => {
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`console: ${m.text()}`);
    });
    page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  };
  context.pages().forEach(watch);
  context.on("page", watch);
  return {
    context,
    errors,
    newPage: () => context.newPage(),
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
