// Browser test of a store of runs served beside a run (`perfscape serve RUN --store DIR`): the
// run information lists the store's runs with their tags, readable at both viewport sizes, and
// the page can query them with `POST /api/sql` `"over": "store"`. Run: `npm run test:browser`.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { binary, browser, open, repo, serve, shared } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');
const np8 = path.join(shared, 'corpus/tau-real/mpi-stencil-np8-snapshot');

describe('a store of runs served beside the run', () => {
  let server;
  let br;
  let dir;
  let cache;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'perfscape-store-'));
    cache = mkdtempSync(path.join(tmpdir(), 'perfscape-store-cache-'));
    const env = { ...process.env, PERFSCAPE_CACHE_DIR: cache };
    execFileSync(binary(), ['store', 'add', np64, '--tag', 'build=baseline', '--store', dir], { env });
    execFileSync(binary(), ['store', 'add', np8, '--tag', 'build=opt', '--store', dir], { env });
    server = await serve(np64, ['--store', dir]);
    br = await browser();
  });
  after(async () => {
    await br?.close();
    server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (cache) rmSync(cache, { recursive: true, force: true });
  });

  for (const viewport of [{ width: 1600, height: 1000 }, { width: 1280, height: 800 }]) {
    test(`the run information lists the store's runs at ${viewport.width}×${viewport.height}`, async () => {
      const { page, errors } = await open(br, server.url, viewport);
      await page.waitForSelector('.store-list li', { timeout: 20000 });
      const head = await page.textContent('.store-runs h3');
      assert.equal(head, `Store ${dir} (2 runs)`);
      const items = await page.$$eval('.store-list li', (lis) => lis.map((li) => li.textContent.trim()));
      assert.equal(items.length, 2);
      assert.match(items[0], /^run 0 mpi-stencil-np64-callpath-commmatrix\s*tau, 64 threads, build=baseline; added \d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
      assert.match(items[1], /^run 1 mpi-stencil-np8-snapshot\s*tau-snapshot, 8 threads, build=opt; added/);
      // Readable: every entry inside its panel (no horizontal overflow).
      const fits = await page.evaluate(() => {
        const panel = document.querySelector('.panel-runinfo').getBoundingClientRect();
        return [...document.querySelectorAll('.store-list li')].every((li) => {
          const r = li.getBoundingClientRect();
          return r.left >= panel.left - 1 && r.right <= panel.right + 1;
        });
      });
      assert.ok(fits, 'the store entries fit in the run information panel');
      // The page's own origin may query the store.
      const answer = await page.evaluate(async () => {
        const res = await fetch('/api/sql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'SELECT r.run, t.value, r.thread_count FROM runs r JOIN tags t USING (run) ORDER BY r.run', over: 'store' }),
        });
        return [res.status, await res.json()];
      });
      assert.equal(answer[0], 200, JSON.stringify(answer[1]));
      assert.deepEqual(answer[1].rows, [[0, 'baseline', 64], [1, 'opt', 8]]);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});
