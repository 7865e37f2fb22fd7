// Shared helpers of the browser tests: start `perfscape serve` on a run, open the page in
// headless Debian Chromium (playwright-core), and inspect what was drawn.

import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';
import { PNG } from 'pngjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '../..');
export const shared = process.env.PERFSCAPE_SHARED ?? path.resolve(repo, '../shared');

/** The perfscape binary: $PERFSCAPE_BIN, else the debug build in $CARGO_TARGET_DIR or target/. */
export function binary() {
  const candidates = [
    process.env.PERFSCAPE_BIN,
    process.env.CARGO_TARGET_DIR && path.join(process.env.CARGO_TARGET_DIR, 'debug/perfscape'),
    path.join(repo, 'target/debug/perfscape'),
  ].filter(Boolean);
  const bin = candidates.find((c) => existsSync(c));
  if (!bin) throw new Error(`perfscape binary not found (tried ${candidates.join(', ')}); build it or set PERFSCAPE_BIN`);
  return bin;
}

/** Starts `perfscape serve RUN`; resolves to { url, stop }. */
export function serve(run, extra = []) {
  return new Promise((resolve, reject) => {
    // Profile caches go to a temporary directory (the Rust test's, else a new one removed when
    // the server stops), never the user's.
    const ownCache = process.env.PERFSCAPE_CACHE_DIR ? null : mkdtempSync(path.join(tmpdir(), 'perfscape-browser-cache-'));
    // Also when a test ends without stopping its server.
    if (ownCache) process.on('exit', () => rmSync(ownCache, { recursive: true, force: true }));
    const env = { ...process.env, PERFSCAPE_CACHE_DIR: process.env.PERFSCAPE_CACHE_DIR ?? ownCache };
    const child = spawn(binary(), ['serve', run, '--no-open', ...extra], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}${err}`)), 120000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/ at (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        const stop = () => {
          child.kill('SIGINT');
          if (ownCache) child.once('exit', () => rmSync(ownCache, { recursive: true, force: true }));
        };
        resolve({ url: m[1], stop, stderr: () => err });
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}${err}`)));
  });
}

/** For the enclosing `describe` block: `before` serves the run `run()` names (with `extra`
 * arguments) and starts a browser, `after` closes both. Returns `{ server, br }`, filled
 * once `before` has run. */
export function servedForSuite(run, extra = []) {
  const s = { server: null, br: null };
  before(async () => {
    s.server = await serve(run(), extra);
    s.br = await browser();
  });
  after(async () => {
    await s.br?.close();
    s.server?.stop();
  });
  return s;
}

/** A large run made by ../shared/tools/tau_scale.py: 4,096 ranks in $PERFSCAPE_BIG_RUN, 65,536
 * in $PERFSCAPE_HUGE_RUN (made once and kept there), else in a temporary directory. */
export function bigRun(ranks = 4096) {
  const env = ranks === 4096 ? process.env.PERFSCAPE_BIG_RUN : process.env.PERFSCAPE_HUGE_RUN;
  let dir = env;
  if (!dir) {
    // A run made here is removed when the test process ends (the 65,536-rank one is 1.6 GB).
    const root = mkdtempSync(path.join(tmpdir(), 'perfscape-big-'));
    process.on('exit', () => rmSync(root, { recursive: true, force: true }));
    dir = path.join(root, `np${ranks}`);
  }
  if (!existsSync(path.join(dir, `profile.${ranks - 1}.0.0`))) {
    execFileSync('python3', [
      path.join(shared, 'tools/tau_scale.py'),
      path.join(shared, 'corpus/tau-real/mpi-stencil-np64-callpath-commmatrix'),
      dir, '--ranks', String(ranks), '--lines', '5000',
    ]);
  }
  return dir;
}

export async function browser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--enable-unsafe-swiftshader'],
  });
}

/** Opens a page and waits until every view has drawn once; collects console errors. The URL
 * `perfscape serve` prints carries `?token=...`: a test appending `?a=b` to it means `&a=b`. */
export async function open(br, url, viewport = { width: 1600, height: 1000 }) {
  const [head, ...query] = url.split('?');
  if (query.length > 1) url = `${head}?${query.join('&')}`;
  const page = await br.newPage({ viewport });
  settlers.set(page, inFlight(page));
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="1"], .fatal', { timeout: 60000 });
  await page.waitForTimeout(800);
  return { page, errors };
}

/** Counts the page's API requests in flight; `settle()` resolves once none has been for 700 ms. */
export function inFlight(page) {
  const pending = new Set();
  const api = (r) => new URL(r.url()).pathname.startsWith('/api/');
  page.on('request', (r) => api(r) && pending.add(r));
  page.on('requestfinished', (r) => pending.delete(r));
  page.on('requestfailed', (r) => pending.delete(r));
  return async function settle() {
    for (let quiet = 0; quiet < 7; ) {
      await page.waitForTimeout(100);
      quiet = pending.size ? 0 : quiet + 1;
    }
  };
}

/** `inFlight` of every page `open` made. */
const settlers = new WeakMap();

/** Waits until the views of a page `open` made have their answers (no API request in flight
 * for 700 ms, however slow the server: a debug build on a loaded machine), then `drawMs` for
 * the charts to draw them. */
export async function settled(page, drawMs = 500) {
  const settle = settlers.get(page);
  if (!settle) throw new Error('settled: the page was not made by open()');
  await settle();
  await page.waitForTimeout(drawMs);
}

/** Pixel statistics of an element's screenshot: share of non-background pixels, distinct colours. */
export async function drawn(page, selector) {
  const png = PNG.sync.read(await page.locator(selector).screenshot());
  const colours = new Set();
  let ink = 0;
  for (let i = 0; i < png.data.length; i += 4) {
    const [r, g, b] = [png.data[i], png.data[i + 1], png.data[i + 2]];
    if (!(r > 245 && g > 245 && b > 245)) ink++;
    colours.add((r >> 3) << 10 | (g >> 3) << 5 | (b >> 3));
  }
  return { ink: ink / (png.width * png.height), colours: colours.size };
}

/** The ECharts option of a panel's chart (exposed by the page as window.perfscape.charts). */
export function option(page, name) {
  return page.evaluate((n) => {
    const c = window.perfscape.charts.get(n);
    const o = c.getOption();
    return JSON.parse(JSON.stringify(o, (k, v) => (typeof v === 'function' ? undefined : v)));
  }, name);
}

export function selection(page) {
  return page.evaluate(() => window.perfscape.store.get());
}
