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
