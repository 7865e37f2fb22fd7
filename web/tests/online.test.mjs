// On-line ingest (STREAM.md): the MPI example examples/online/stencil_online.c, built with
// Debian's OpenMPI and run with `mpirun -np 8`, streams its regions and messages to
// `perfscape serve --listen`; the open page's trend and heat map grow while it runs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { browser, drawn, repo, serve } from './harness.mjs';

const SIZES = [{ width: 1600, height: 1000 }, { width: 1280, height: 800 }];
const shots = process.env.PERFSCAPE_SCREENSHOTS;

test('the MPI example streams to a served page: trend, heat map and communication matrix grow while it runs', { timeout: 240000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'perfscape-online-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const exe = path.join(dir, 'stencil_online');
  execFileSync('mpicc', ['-O2', '-Wall', '-Wextra', '-Werror', `-I${path.join(repo, 'producers')}`,
    path.join(repo, 'examples/online/stencil_online.c'), '-o', exe]);
  const sock = path.join(dir, 'ps.sock');
  const server = await serve('stencil_online', ['--listen', `unix:${sock}`, '--threads', '8']);
  const br = await browser();
  let mpi;
  try {
    const pages = [];
    for (const size of SIZES) {
      const page = await br.newPage({ viewport: size });
      const errors = [];
      page.on('pageerror', (e) => errors.push(e.message));
      page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
      await page.goto(server.url);
      await page.waitForSelector('body[data-ready="1"], .fatal', { timeout: 60000 });
      pages.push({ page, errors, size });
    }
    // 400 iterations of >= 15 ms: about 6 s or more; a sample every 10 iterations (40).
    mpi = spawn('mpirun', ['--allow-run-as-root', '--oversubscribe', '-np', '8', exe, '400', '20000', '15000'], {
      env: { ...process.env, PERFSCAPE_STREAM: `unix:${sock}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let mpiOut = '';
    mpi.stdout.on('data', (d) => (mpiOut += d));
    mpi.stderr.on('data', (d) => (mpiOut += d));
    const mpiDone = new Promise((resolve) => mpi.on('exit', resolve));
    const trendLength = (page) => page.evaluate(() => window.perfscape.charts.get('trend')?.getOption().xAxis?.[0]?.data?.length ?? 0);
    // While it runs: the first samples arrive and the views draw them.
    const { page } = pages[0];
    await page.waitForFunction(() => (window.perfscapeLive?.counts ?? []).some((n) => n >= 3), null, { timeout: 60000 });
    await page.waitForFunction(() => (window.perfscape.charts.get('trend')?.getOption().xAxis?.[0]?.data?.length ?? 0) >= 3, null, { timeout: 30000 });
    if (shots) await page.screenshot({ path: path.join(shots, 'online-running-1600.png') });
    const early = await trendLength(page);
    const earlyHeat = await drawn(page, '#panel-heatmap .chart');
    assert.ok(early < 40, `caught while running (${early} of 40 samples)`);
    const code = await mpiDone;
    assert.equal(code, 0, mpiOut);
    assert.match(mpiOut, /8 ranks, 400 iterations done/);
    for (const { page: p, errors, size } of pages) {
      // Every sample and the final one (the end records): 41.
      await p.waitForFunction(() => (window.perfscapeLive?.counts ?? []).includes(41), null, { timeout: 60000 });
      await p.waitForFunction(() => (window.perfscape.charts.get('trend')?.getOption().xAxis?.[0]?.data?.length ?? 0) === 41, null, { timeout: 30000 });
      const counts = await p.evaluate(() => window.perfscapeLive.counts);
      assert.deepEqual([...counts].sort((a, b) => a - b), counts, `the sample count only grew: ${counts}`);
      const heat = await drawn(p, '#panel-heatmap .chart');
      assert.ok(heat.ink > 0.05, `heat map drawn: ${JSON.stringify(heat)}`);
      if (shots) await p.screenshot({ path: path.join(shots, `online-done-${size.width}.png`) });
      assert.deepEqual(errors, []);
    }
    assert.ok(earlyHeat.ink > 0.01, `heat map drawn while running: ${JSON.stringify(earlyHeat)}`);
    // The server's view of the streamed run: 8 ranks, MPI and the messages between neighbours.
    const origin = new URL(server.url);
    const q = `token=${origin.searchParams.get('token')}`;
    const info = await fetch(`${origin.origin}/api/run?${q}`).then((r) => r.json());
    assert.equal(info.threads, 8);
    assert.equal(info.format, 'perfscape-stream (live)');
    assert.equal(info.comm, true);
    const comm = await fetch(`${origin.origin}/api/comm?stat=calls&${q}`).then((r) => r.json());
    // Each rank sent 400 messages to each neighbour (rank 0 and 7 have one).
    const n = comm.cols.length;
    const sent = comm.values.map((v, i) => [Math.floor(i / n), i % n, v]).filter(([, , v]) => v !== null && v > 0);
    assert.equal(sent.length, 14, JSON.stringify(sent));
    assert.ok(sent.every(([r, c, v]) => Math.abs(r - c) === 1 && v === 400), JSON.stringify(sent));
  } finally {
    if (mpi && mpi.exitCode === null) mpi.kill('SIGKILL');
    await br.close();
    server.stop();
  }
});

test('a long stream kept within a window of samples: the slider and the trend show the kept samples', { timeout: 120000 }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'perfscape-window-'));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  const sock = path.join(dir, 'ps.sock');
  const server = await serve('window', ['--listen', `unix:${sock}`, '--threads', '2', '--sample-window', '16']);
  const br = await browser();
  let producer;
  try {
    const page = await br.newPage({ viewport: SIZES[1] });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="1"], .fatal', { timeout: 60000 });
    // Two ranks, 60 iterations, a sample each: 61 samples with the final one, at most 16 kept.
    const script = `
import os, sys, time
sys.path.insert(0, ${JSON.stringify(path.join(repo, 'producers'))})
from perfscape_stream import Stream
ss = [Stream(os.environ["PERFSCAPE_STREAM"], rank=r, program="window") for r in (0, 1)]
for k in range(60):
    for r, s in enumerate(ss):
        s.enter("compute", t_ns=1_000_000 * k)
        s.exit(t_ns=1_000_000 * k + 1000 * (k + 1) * (r + 1))
        s.sample(f"iteration {k}", t_ns=1_000_000 * k + 900_000)
    time.sleep(0.03)
for s in ss:
    s.end(t_ns=70_000_000)
    s.close()
`;
    producer = spawn('python3', ['-c', script], { env: { ...process.env, PERFSCAPE_STREAM: `unix:${sock}` }, stdio: 'inherit' });
    assert.equal(await new Promise((resolve) => producer.on('exit', resolve)), 0);
    await page.waitForFunction(() => (window.perfscapeLive?.counts ?? []).includes(61), null, { timeout: 60000 });
    const series = await page.evaluate(async () => (await fetch('/api/series')).json());
    const kept = series.samples.filter((s) => !s.thinned).map((s) => s.seq);
    assert.equal(series.samples.length, 61);
    assert.ok(kept.length <= 16 && kept.length > 4, `kept ${kept}`);
    // The trend has one point per kept sample, named after it.
    await page.waitForFunction((n) => window.perfscape.charts.get('trend')?.getOption().xAxis?.[0]?.data?.length === n, kept.length, { timeout: 30000 });
    const names = await page.evaluate(() => window.perfscape.charts.get('trend').getOption().xAxis[0].data);
    assert.deepEqual(names, kept.map((k) => series.samples[k].name));
    // Dragging the slider onto a thinned sample selects the nearest kept one.
    const thinned = series.samples.find((s) => s.thinned).seq;
    await page.evaluate((v) => {
      const s = document.querySelector('#sample-slider');
      s.value = String(v);
      s.dispatchEvent(new Event('input'));
    }, thinned);
    const sel = await page.evaluate(() => window.perfscape.store.get().sample);
    assert.ok(kept.includes(sel) && sel > thinned, `sample ${sel} selected for thinned ${thinned}`);
    assert.match(await page.textContent('.sample-name'), /older ones thinned/);
    if (shots) await page.screenshot({ path: path.join(shots, 'online-window-1280.png') });
    assert.deepEqual(errors, []);
  } finally {
    if (producer && producer.exitCode === null) producer.kill('SIGKILL');
    await br.close();
    server.stop();
  }
});
