// Browser test of self-contained reports (`perfscape report RUN [--dashboard FILE] -o
// report.html`): the file opens from file:// with no server running, every panel draws at
// 1600×1000 and 1280×800, and a click in one panel redraws the panels that follow the
// selection from the answers recorded in the file. Run: `npm run test:browser`.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { allDrew, panels, settled } from './dashboard-helpers.mjs';
import { binary, browser, open, repo } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');
const examples = path.join(repo, 'examples/dashboards');
const SIZES = [
  { width: 1600, height: 1000 },
  { width: 1280, height: 800 },
];

describe('self-contained reports', () => {
  let br;
  let dir;
  const made = {};
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'perfscape-report-'));
    const env = { ...process.env, PERFSCAPE_CACHE_DIR: path.join(dir, 'cache') };
    made.overview = path.join(dir, 'overview.html');
    execFileSync(binary(), ['report', np64, '-o', made.overview], { env });
    made.mpi = path.join(dir, 'mpi.html');
    execFileSync(binary(), ['report', np64, '--dashboard', path.join(examples, 'mpi.toml'), '-o', made.mpi], { env });
    br = await browser();
  });
  after(async () => {
    await br?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const [name, count] of [['overview', 6], ['mpi', 6]]) {
    test(`the ${name} report of the np64 example draws every panel from file://`, async () => {
      assert.ok(statSync(made[name]).size > 500_000, 'the page and its answers are inlined');
      for (const vp of SIZES) {
        const { page, errors } = await open(br, `file://${made[name]}`, vp);
        await settled(page);
        const list = await panels(page);
        assert.equal(list.length, count, list.map((p) => p.title).join(' | '));
        allDrew(list, `${name} ${vp.width}×${vp.height}`);
        // No request left the page: everything came from the file.
        assert.equal(await page.evaluate(() => performance.getEntriesByType('resource').filter((r) => r.name.startsWith('http')).length), 0);
        assert.match(await page.textContent('header'), /report made \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
        assert.deepEqual(errors, []);
        await page.close();
      }
    });
  }

  test('a selection made in the report redraws the panels that follow it from the recorded answers', async () => {
    const { page, errors } = await open(br, `file://${made.overview}`, SIZES[0]);
    await settled(page);
    const perThread = async () =>
      page.evaluate(() => {
        const p = [...document.querySelectorAll('main.dash > .panel')].find((x) => x.querySelector('h2').textContent.startsWith('The selected event'));
        const o = window.perfscape.charts.get(p.dataset.view)?.getOption();
        return o?.series?.[0]?.data?.map((d) => (Array.isArray(d) ? d[1] : (d?.value ?? d)));
      });
    const before = await perThread();
    assert.equal(before.length, 64);
    // Select MPI_Allreduce() (its id from the recorded ranked table).
    const id = await page.evaluate(() => window.perfscape.ctx.events(window.perfscape.store.get()).then((e) => e.rows.find((r) => r.name === 'MPI_Allreduce()').id));
    await page.evaluate((e) => window.perfscape.store.set({ event: e }), id);
    await page.waitForFunction((b) => {
      const p = [...document.querySelectorAll('main.dash > .panel')].find((x) => x.querySelector('h2').textContent.startsWith('The selected event'));
      const d = window.perfscape.charts.get(p.dataset.view)?.getOption()?.series?.[0]?.data ?? [];
      return JSON.stringify(d.map((x) => (Array.isArray(x) ? x[1] : (x?.value ?? x)))) !== b;
    }, JSON.stringify(before));
    const after = await perThread();
    assert.equal(after.length, 64);
    // MPI_Allreduce() takes 0.4–0.7 s on every rank of this run (TAU's pprof.txt of the example).
    assert.ok(after.every((v) => v > 4e5 && v < 7e5), JSON.stringify(after));
    assert.deepEqual(errors, []);
    await page.close();
  });
});
