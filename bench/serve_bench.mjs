// Serving benchmark: p50/p99 of the heat-map and overview API requests on a run, and the
// page's time to first complete draw in headless Chromium. Prints one JSON object.
// usage: node bench/serve_bench.mjs PERFSCAPE_BIN RUN_DIR [REQUESTS]

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../web/package.json'));
const { chromium } = require('playwright-core');

const [bin, run, nArg] = process.argv.slice(2);
const N = Number(nArg ?? 200);

function serve() {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['serve', run, '--no-open'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/ at (http:\/\/\S+)/);
      if (m) resolve({ url: m[1], child });
    });
    child.on('exit', (c) => reject(new Error(`server exited ${c}`)));
  });
}

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function timeRequests(base, makePath) {
  const times = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const r = await get(base + makePath(i));
    if (!r.ok) throw new Error(`${r.status} ${makePath(i)}`);
    await r.arrayBuffer();
    times.push(performance.now() - t0);
  }
  return { p50_ms: pct(times, 50), p99_ms: pct(times, 99) };
}

const { url, child } = await serve();
// The printed URL carries the access token (`?token=...`): API requests send it as a header.
const base = url.replace(/\/?(\?.*)?$/, '');
const token = new URL(url).searchParams.get('token');
const get = (u) => fetch(u, { headers: token ? { authorization: `Bearer ${token}` } : {} });
try {
  const info = await (await get(`${base}/api/run`)).json();
  const threads = info.threads;
  const rows = (await (await get(`${base}/api/rows`)).json()).rows.length;
  const lines = (await (await get(`${base}/api/rows?rows=lines`)).json()).rows.length;
  // Deterministic pseudo-random zoom regions.
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const region = (n) => {
    const a = Math.floor(rnd() * n);
    const b = Math.min(n, a + 1 + Math.floor(rnd() * n));
    return [a, b];
  };
  const result = { run, threads, rows, lines, requests: N };
  result.matrix_whole = await timeRequests(base, () => '/api/matrix?h=200&w=400');
  result.matrix_zoom = await timeRequests(base, () => {
    const [r0, r1] = region(rows);
    const [t0, t1] = region(threads);
    return `/api/matrix?h=200&w=400&r0=${r0}&r1=${r1}&t0=${t0}&t1=${t1}`;
  });
  result.matrix_lines = await timeRequests(base, () => '/api/matrix?rows=lines&h=300&w=400');
  result.overview_events = await timeRequests(base, () => '/api/overview?w=64');
  result.overview_lines = await timeRequests(base, () => '/api/overview?rows=lines&skip=20&bin=4&strips=3&w=64');
  // Page: time from navigation to every view drawn (ready flag + two animation frames).
  const br = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--enable-unsafe-swiftshader'],
  });
  const draws = [];
  for (let i = 0; i < 4; i++) {
    const page = await br.newPage({ viewport: { width: 1600, height: 1000 } });
    const t0 = performance.now();
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 120000 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    draws.push(performance.now() - t0);
    await page.close();
  }
  await br.close();
  draws.shift(); // the first load also starts the browser's caches
  result.first_draw_ms = { median: pct(draws, 50), runs: draws.length };
  console.log(JSON.stringify(result));
} finally {
  child.kill('SIGINT');
}
