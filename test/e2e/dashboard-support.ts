import { readFileSync } from "node:fs";
import path from "node:path";
import type { Browser, Locator, Page } from "playwright-core";

const AXE = readFileSync(path.resolve(import.meta.dirname, "../../node_modules/axe-core/axe.min.js"), "utf8");

type Violation = { id: string; impact: string | null; help: string; nodes: { target: string[] }[] };

/**
 * axe-core's serious and critical violations on the page as it is now. axe is put in through the
 * DevTools protocol (page.evaluate), which the page's Content-Security-Policy does not govern: the
 * dashboard itself still runs under it, no inline script allowed.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document) => Promise<{ violations: Violation[] }> } })
      .axe;
    return (await axe.run(document)).violations;
  });
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((n) => n.target.join(" ")).join(", ")}`,
    );
}

/** How far the page scrolls sideways (0: it fits the viewport), and the elements that stick out. */
export async function horizontalOverflow(page: Page): Promise<number> {
  const { overflow, culprits } = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const culprits = Array.from(document.querySelectorAll("body *"))
      .filter((element) => element.getBoundingClientRect().right > width + 0.5)
      .map((element) => `${element.tagName.toLowerCase()}.${element.className}`)
      .slice(0, 5);
    return { overflow: document.documentElement.scrollWidth - width, culprits };
  });
  if (overflow > 0) console.log(`overflow ${overflow} px: ${culprits.join(", ")}`);
  return overflow;
}

/** Presses Tab until `target` has the focus (as a keyboard user would), at most `limit` times. */
export async function tabTo(page: Page, target: Locator, limit = 80): Promise<void> {
  const handle = await target.elementHandle();
  if (!handle) throw new Error("tabTo: no such element");
  for (let presses = 0; presses < limit; presses++) {
    if (await handle.evaluate((element) => element === document.activeElement)) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`tabTo: not reached in ${limit} presses of Tab`);
}

/** A page of a new browser context that sends `cookie` (`svc_session=…`, as a Client keeps it) to `baseUrl`. */
export async function pageWithCookie(browser: Browser, baseUrl: string, cookie: string | undefined): Promise<Page> {
  const context = await browser.newContext();
  const [name = "", value = ""] = (cookie ?? "").split("=");
  await context.addCookies([{ name, value, url: baseUrl }]);
  return context.newPage();
}
