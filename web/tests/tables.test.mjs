// Browser tests of the tables (issue 18, points 2, 3 and part of 8): the ranked table's
// columns that answer "which rank is slow" are visible without scrolling, its name column stays
// when the table scrolls right, the columns are the user's choice (kept in the URL); callpath
// labels read leaf first and tell rows apart; the call tree's name column is resizable; threads
// read "rank N". At 1600×1000 and 1280×800.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import path from 'node:path';
import { browser, open, repo, selection, serve, shared, servedForSuite } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');
const ALL = 'rank,name,source,sum,percent,mean,min,max,imbalance,calls';

/** The headers of the ranked table, in order. */
const headers = (page) => page.$$eval('#panel-ranked thead th', (ths) => ths.map((t) => t.dataset.key));

/** True when `inner`'s box lies inside `outer`'s (1 px of slack). */
function inside(inner, outer) {
  return inner.x >= outer.x - 1 && inner.y >= outer.y - 1 && inner.x + inner.width <= outer.x + outer.width + 1 && inner.y + inner.height <= outer.y + outer.height + 1;
}

describe('tables on the 64-rank run', () => {
  const s = servedForSuite(() => np64);

  for (const viewport of [{ width: 1600, height: 1000 }, { width: 1280, height: 800 }]) {
    const size = `${viewport.width}×${viewport.height}`;

    test(`ranked table at ${size}: Max, Imbalance and Calls visible without scrolling; Max names the rank`, async () => {
      const { page, errors } = await open(s.br, s.server.url, viewport);
      const box = await page.locator('#panel-ranked .scroll').boundingBox();
      for (const key of ['name', 'max', 'imbalance', 'calls']) {
        const th = await page.locator(`#panel-ranked thead th[data-key="${key}"]`).boundingBox();
        assert.ok(th, `${key} shown`);
        assert.ok(inside(th, box), `${key} header inside the panel: ${JSON.stringify(th)} in ${JSON.stringify(box)}`);
      }
      assert.equal(await page.$eval('#panel-ranked .scroll', (e) => e.scrollWidth <= e.clientWidth), true, 'no horizontal scroll');
      // Max: the value and its thread as "rank N" (every thread of this run is N.0.0).
      const maxCol = (await headers(page)).indexOf('max');
      const cells = await page.$$eval('#panel-ranked tbody tr', (trs, i) => trs.map((tr) => tr.children[i].textContent), maxCol);
      assert.equal(cells.length, 18);
      for (const c of cells) assert.match(c, /\d (s|ms|µs) rank \d+$/, c);
      assert.doesNotMatch(cells.join(' '), /\d+\.0\.0/);
      // The API keeps N.C.T.
      const api = await page.evaluate(() => fetch('/api/events').then((r) => r.json()));
      assert.match(api.rows[0].stats.max_thread, /^\d+\.0\.0$/);
      // The CSV keeps whole names and N.C.T threads.
      const csv = await page.evaluate(() => window.perfscape.views.get('ranked').csv());
      const lines = csv.trim().split(/\r?\n/);
      assert.match(lines[0], /Max thread/);
      assert.match(lines[1], /MPI_Init\(\)/);
      assert.match(lines[1], /,\d+\.0\.0,/);
      assert.doesNotMatch(csv, /rank \d/);
      // The header's selection names a thread as the page does.
      await page.evaluate(() => window.perfscape.store.set({ thread: '12.0.0' }));
      await page.waitForFunction(() => / · rank 12$/.test(document.querySelector('#selection')?.textContent ?? ''));
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`ranked table at ${size}: scrolled right, the event names stay in view`, async () => {
      // Every column shown: the table is wider than the panel.
      const { page, errors } = await open(s.br, `${s.server.url}?cols=${ALL}`, viewport);
      assert.deepEqual(await headers(page), ['rank', 'name', 'sum', 'percent', 'mean', 'min', 'max', 'imbalance', 'calls']);
      const scroll = page.locator('#panel-ranked .scroll');
      const wide = await scroll.evaluate((e) => e.scrollWidth - e.clientWidth);
      assert.ok(wide > 20, `the table scrolls (${wide} px)`);
      await scroll.evaluate((e) => (e.scrollLeft = e.scrollWidth));
      await page.waitForTimeout(200);
      assert.ok((await scroll.evaluate((e) => e.scrollLeft)) > 20);
      const box = await scroll.boundingBox();
      for (const sel of ['#panel-ranked thead th[data-key="name"]', '#panel-ranked tbody tr:nth-child(3) td.name', '#panel-ranked tbody tr:nth-child(3) td.pin-rank']) {
        const cell = await page.locator(sel).boundingBox();
        assert.ok(inside(cell, box), `${sel} inside the panel after scrolling: ${JSON.stringify(cell)} in ${JSON.stringify(box)}`);
        // Not covered by another cell: the one seen at its middle is itself.
        const seen = await page.locator(sel).evaluate((el) => {
          const r = el.getBoundingClientRect();
          const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          return at === el || el.contains(at);
        });
        assert.ok(seen, `${sel} is what one sees at its place`);
      }
      assert.equal(await page.textContent('#panel-ranked tbody tr:nth-child(3) td.name'), 'MPI_Finalize()');
      // The last columns are in view too.
      assert.ok(inside(await page.locator('#panel-ranked thead th[data-key="calls"]').boundingBox(), box));
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`ranked table at ${size}: the columns control hides and shows columns, kept in the URL`, async () => {
      const { page, errors } = await open(s.br, s.server.url, viewport);
      const fitted = await headers(page);
      assert.ok(!fitted.includes('min'));
      await page.click('#panel-ranked .colpick summary');
      await page.uncheck('#panel-ranked .colpick input[value="calls"]');
      await page.waitForFunction(() => !document.querySelector('#panel-ranked thead th[data-key="calls"]'));
      await page.check('#panel-ranked .colpick input[value="min"]');
      await page.waitForFunction(() => !!document.querySelector('#panel-ranked thead th[data-key="min"]'));
      const want = [...fitted.filter((k) => k !== 'calls'), 'min'];
      const order = ['rank', 'name', 'source', 'sum', 'percent', 'mean', 'min', 'max', 'imbalance', 'calls'];
      want.sort((a, b) => order.indexOf(a) - order.indexOf(b));
      assert.deepEqual(await headers(page), want);
      const cols = new URL(page.url()).searchParams.get('cols');
      assert.equal(cols, want.join(','));
      assert.equal((await selection(page)).cols, cols);
      // A reload shows the same columns.
      await page.reload();
      await page.waitForSelector('body[data-ready="1"]');
      await page.waitForSelector('#panel-ranked tbody tr');
      assert.deepEqual(await headers(page), want);
      assert.equal(await page.isChecked('#panel-ranked .colpick input[value="min"]'), true);
      assert.equal(await page.isChecked('#panel-ranked .colpick input[value="calls"]'), false);
      // "fit to the panel" brings the fitted columns back and leaves the URL.
      await page.click('#panel-ranked .colpick summary');
      await page.click('#panel-ranked .colpick-fit');
      await page.waitForFunction(() => !new URL(location.href).searchParams.has('cols'));
      assert.deepEqual(await headers(page), fitted);
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`callpaths at ${size}: labels end with their leaf, tell rows apart, the whole path on hover`, async () => {
      const { page, errors } = await open(s.br, `${s.server.url}?callpaths=1`, viewport);
      const rows = await page.$$eval('#panel-ranked tbody tr', (trs) =>
        trs.slice(0, 30).map((tr) => ({ text: tr.querySelector('td.name').textContent, title: tr.querySelector('td.name').title })),
      );
      assert.equal(rows.length, 30);
      const api = await page.evaluate(() => fetch('/api/events?callpaths=true').then((r) => r.json()));
      const names = new Set(api.rows.map((r) => r.name));
      const paths = rows.filter((r) => r.title.includes(' => '));
      assert.ok(paths.length >= 10, `callpath rows among the first 30: ${paths.length}`);
      for (const r of rows) {
        assert.ok(names.has(r.title), `the title is the whole name: ${r.title}`);
        const leaf = r.title.split(' => ').pop();
        // The label ends with the leaf (a leaf longer than the room keeps its end).
        const end = r.text.split('…').pop();
        assert.ok(r.text.endsWith(leaf) || (leaf.endsWith(end) && end.length >= 6), `${JSON.stringify(r.text)} ends with ${JSON.stringify(leaf)}`);
        if (r.title.includes(' => ')) assert.ok(!r.text.startsWith('.TAU application => main'), r.text);
      }
      // Distinct events read differently.
      for (let i = 0; i < rows.length; i++) {
        for (let j = i + 1; j < rows.length; j++) {
          if (rows[i].title !== rows[j].title) assert.notEqual(rows[i].text, rows[j].text, `${rows[i].title} / ${rows[j].title}`);
        }
      }
      // No horizontal scroll with callpaths either.
      assert.equal(await page.$eval('#panel-ranked .scroll', (e) => e.scrollWidth <= e.clientWidth), true);
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`call tree at ${size}: the name column fitted, resizable by dragging, the width kept in the URL`, async () => {
      const { page, errors } = await open(s.br, s.server.url, viewport);
      const th = page.locator('#panel-calltree thead th.name');
      const w0 = (await th.boundingBox()).width;
      // Fitted: the numbers in view without scrolling, no name cut by more than a quarter.
      const fit = await page.evaluate(() => {
        const s = document.querySelector('#panel-calltree .scroll');
        const range = document.createRange();
        const worst = Math.max(...[...document.querySelectorAll('#panel-calltree td.name')].map((td) => {
          range.selectNodeContents(td);
          const pad = parseFloat(getComputedStyle(td).paddingLeft);
          return (range.getBoundingClientRect().width + pad) / td.clientWidth;
        }));
        return { overflow: s.scrollWidth - s.clientWidth, worst };
      });
      assert.ok(fit.overflow <= 0, `the call tree scrolls by ${fit.overflow} px`);
      assert.ok(fit.worst <= 1.34, `a name needs ${fit.worst.toFixed(2)} times its cell`);
      // A node's whole callpath on hover.
      const title = await page.getAttribute('#panel-calltree tbody tr:has-text("timestep_loop") td.name', 'title');
      assert.equal(title, '.TAU application => main int (int, char **) => timestep_loop');
      const grip = await page.locator('#panel-calltree th.name .col-grip').boundingBox();
      const x = grip.x + grip.width / 2;
      const y = grip.y + grip.height / 2;
      await page.mouse.move(x, y);
      await page.mouse.down();
      await page.mouse.move(x + 60, y, { steps: 4 });
      await page.mouse.move(x + 150, y, { steps: 4 });
      await page.mouse.up();
      await page.waitForFunction(() => window.perfscape.store.get().ctw > 0);
      const w1 = (await th.boundingBox()).width;
      assert.ok(Math.abs(w1 - (w0 + 150)) <= 3, `dragged 150 px: ${w0} → ${w1}`);
      const td = (await page.locator('#panel-calltree tbody tr:first-child td.name').boundingBox()).width;
      assert.ok(Math.abs(td - w1) <= 1, 'the cells follow the head');
      const ctw = (await selection(page)).ctw;
      assert.ok(Math.abs(ctw - w1) <= 2, `ctw ${ctw}`);
      assert.equal(new URL(page.url()).searchParams.get('ctw'), String(ctw));
      // A page opened at that URL has the width; scrolled right, the names stay.
      const { page: p2 } = await open(s.br, page.url(), viewport);
      const w2 = (await p2.locator('#panel-calltree thead th.name').boundingBox()).width;
      assert.ok(Math.abs(w2 - w1) <= 2, `reopened: ${w2}`);
      const scroll = p2.locator('#panel-calltree .scroll');
      await scroll.evaluate((e) => (e.scrollLeft = e.scrollWidth));
      await p2.waitForTimeout(200);
      if ((await scroll.evaluate((e) => e.scrollLeft)) > 0) {
        const box = await scroll.boundingBox();
        const cell = await p2.locator('#panel-calltree tbody tr:first-child td.name').boundingBox();
        assert.ok(cell.x >= box.x - 1, `name cell in view after scrolling: ${JSON.stringify(cell)} in ${JSON.stringify(box)}`);
      }
      assert.deepEqual(errors, []);
      await Promise.all([page.close(), p2.close()]);
    });
  }
});

test('threads of a run with several threads per rank read "rank N, thread T"', async () => {
  const run = path.join(shared, 'corpus/cube/pycubexr-bt-mz-p2/cube4.8_with_checksum_bug.cubex');
  const server = await serve(run);
  const br = await browser();
  try {
    const { page, errors } = await open(br, `${server.url}?cols=name,max`);
    const cells = await page.$$eval('#panel-ranked tbody tr', (trs) => trs.map((tr) => tr.children[1].textContent));
    assert.ok(cells.length > 5);
    for (const c of cells) assert.match(c, /rank \d+, thread \d+$/, c);
    await page.evaluate(() => window.perfscape.store.set({ thread: '1.0.3' }));
    await page.waitForFunction(() => / · rank 1, thread 3$/.test(document.querySelector('#selection')?.textContent ?? ''));
    assert.deepEqual(errors.filter((e) => !/Failed to load resource/.test(e)), []);
    await page.close();
  } finally {
    await br.close();
    server.stop();
  }
});
