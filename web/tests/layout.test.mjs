// Browser tests of the page's layout, itself a dashboard file (GET /api/layout): the built-in
// one draws every view a run has, in three columns, leaving out what the run lacks;
// `serve --layout FILE` replaces it, and an edit of that file is drawn in place without a
// reload; a `--filter` is named in every panel's head with what it hides. Run: `npm run
// test:browser`.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { settled } from './dashboard-helpers.mjs';
import { browser, open, repo, serve, shared } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');
const np8 = path.join(shared, 'corpus/tau-real/mpi-stencil-np8-snapshot');

/** The views of the layout's panels, in order. */
const views = (page) => page.$$eval('main.dash.layout > .panel', (els) => els.map((p) => p.dataset.view));

describe('layout', () => {
  let br;
  let dir;
  before(async () => {
    br = await browser();
    dir = mkdtempSync(path.join(tmpdir(), 'perfscape-layout-'));
  });
  after(async () => {
    await br?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the built-in layout: every view of the run in three columns, the optional ones only where the run has them', async () => {
    for (const [run, expected] of [
      [np64, ['ranked', 'heatmap', 'overview', 'calltree', 'event', 'findings', 'categories', 'comm', 'architecture', 'terrain', 'runinfo', 'userevents', 'pointcloud']],
      [np8, ['ranked', 'heatmap', 'overview', 'trend', 'calltree', 'event', 'findings', 'categories', 'architecture', 'terrain', 'runinfo', 'userevents', 'kiviat', 'pointcloud']],
    ]) {
      const server = await serve(run);
      try {
        const { page, errors } = await open(br, server.url, { width: 1600, height: 1000 });
        await settled(page);
        assert.deepEqual(await views(page), expected);
        // Placed as the file says: the first row is ranked | heat map | overview, widths 1.25 : 1.45 : 0.7;
        // the point cloud fills its row when the Kiviat tube is left out.
        const boxes = await page.$$eval('main.dash.layout > .panel', (els) =>
          Object.fromEntries(els.map((e) => [e.dataset.view, e.getBoundingClientRect().toJSON()])),
        );
        const { ranked, heatmap, overview, pointcloud, event } = boxes;
        assert.ok(Math.abs(ranked.top - heatmap.top) < 1 && Math.abs(heatmap.top - overview.top) < 1);
        const ratio = heatmap.width / overview.width;
        assert.ok(Math.abs(ratio - 1.45 / 0.7) < 0.15, `heat map : overview = ${ratio}`);
        assert.ok(Math.abs(ranked.height - 520) < 3, `ranked is 52vh: ${ranked.height}`);
        assert.ok(Math.abs(event.right - overview.right) < 1, 'the event view spans two columns');
        if (expected.includes('kiviat')) assert.ok(pointcloud.left > boxes.kiviat.right, 'the point cloud beside the Kiviat tube');
        else assert.ok(Math.abs(pointcloud.left - ranked.left) < 1 && Math.abs(pointcloud.right - overview.right) < 1, 'the point cloud fills its row');
        assert.deepEqual(errors, []);
        await page.close();
      } finally {
        server.stop();
      }
    }
  });

  test('serve --layout FILE replaces the built-in layout; an edit of it is drawn in place', { timeout: 60000 }, async () => {
    const file = path.join(dir, 'mine.toml');
    writeFileSync(file, 'title = "mine"\ncolumns = 2\n[[panel]]\nview = "ranked"\n[[panel]]\nview = "event"\n');
    const server = await serve(np64, ['--layout', file]);
    try {
      const { page, errors } = await open(br, server.url, { width: 1280, height: 800 });
      await settled(page);
      assert.deepEqual(await views(page), ['ranked', 'event']);
      await page.evaluate(() => {
        window.marker = 'kept';
      });
      writeFileSync(
        file,
        'title = "mine"\ncolumns = 2\n[[panel]]\nview = "ranked"\n[[panel]]\nview = "event"\n[[panel]]\ntitle = "Top 3 by SQL"\nsql = "SELECT name, SUM(exclusive) AS t FROM event_values JOIN events USING (run, event) WHERE metric = 0 AND NOT is_callpath GROUP BY name ORDER BY t DESC LIMIT 3"\ncomponent = "table"\nspan = 2\nheight = 160\n',
      );
      await page.waitForSelector('main.dash.layout #panel-dashc tbody tr', { timeout: 15000 });
      assert.equal(await page.evaluate(() => window.marker), 'kept', 'no reload');
      const rows = await page.$$eval('#panel-dashc tbody tr', (r) => r.length);
      assert.equal(rows, 3);
      assert.match(await page.textContent('#panel-dashc tbody tr'), /MPI_Init/);
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      server.stop();
    }
  });

  test('a --filter is named in every panel with what it hides', async () => {
    // Independent count: the events of the unfiltered run whose routine is an MPI one (MPI
    // routines are leaves of the call tree: nothing below them is hidden with them).
    const plain = await serve(np64);
    let all;
    try {
      const { page } = await open(br, plain.url);
      all = (await page.evaluate(() => fetch('/api/events?callpaths=true').then((r) => r.json()))).rows;
      await page.close();
    } finally {
      plain.stop();
    }
    const leaf = (name) => name.split(' => ').pop();
    const hidden = all.filter((e) => leaf(e.name).startsWith('MPI_')).length;
    assert.ok(hidden > 0 && hidden < all.length);
    const server = await serve(np64, ['--filter', '!name=MPI_*']);
    try {
      const { page, errors } = await open(br, server.url, { width: 1600, height: 1000 });
      await settled(page);
      const heads = await page.$$eval('main.dash > .panel', (els) => els.map((p) => [p.dataset.view, p.querySelector('.panel-filter')?.textContent ?? null]));
      assert.ok(heads.length >= 8);
      for (const [view, text] of heads) assert.equal(text, `--filter !name=MPI_* hides ${hidden} of ${all.length} events`, view);
      const title = await page.getAttribute('#panel-ranked .panel-filter', 'title');
      assert.match(title, /^--filter !name=MPI_\*: /);
      // The ranked table shows no MPI routine.
      const names = await page.$$eval('#panel-ranked tbody tr', (rs) => rs.map((r) => r.children[1].textContent));
      assert.ok(names.length > 0 && !names.some((n) => n.startsWith('MPI_')), names.join(', '));
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      server.stop();
    }
  });
});
