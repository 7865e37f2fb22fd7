// Browser test of the categories panel on the 64-rank example: the run's donut has the API's
// slices, sorting the threads by a category reorders the stacked bars (largest first), a click
// on a bar selects its thread and the thread's donut then shows the API's values for it.
// Run alone: `node --test web/tests/categories.test.mjs` (needs the debug binary, Chromium).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import path from 'node:path';
import { open, option, repo, selection, servedForSuite } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');

/** `GET /api/categories?query` from the page (its session cookie). */
function api(page, query = '') {
  return page.evaluate((q) => fetch(`/api/categories${q}`).then((r) => r.json()), query);
}

describe('categories panel on the 64-rank run', () => {
  const s = servedForSuite(() => np64);

  test('the run donut has the API slices and the POP figures are shown', async () => {
    const { page, errors } = await open(s.br, `${s.server.url}?focus=categories`);
    await page.waitForSelector('#panel-categories .event-title b');
    const d = await api(page);
    const o = await option(page, 'categories-donuts');
    const run = o.series.find((x) => x.id === 'run');
    const want = d.categories.map((c, i) => [c.name, d.run[i]]).filter(([, v]) => v > 0);
    assert.deepEqual(run.data.map((x) => [x.name, x.value]), want);
    const head = await page.textContent('#panel-categories .event-title');
    assert.match(head, /parallel efficiency/);
    assert.ok(head.includes(`useful: ${d.pop.useful_categories.join(', ')}`), head);
    const p = 100 * d.pop.parallel_efficiency;
    const pe = p >= 9.995 ? p.toFixed(1) : p.toFixed(2);
    assert.ok(head.includes(`${pe}%`), `${head} ${pe}`);
    // 64 bars of stacked categories, in thread order.
    const bars = await option(page, 'categories-bars');
    assert.equal(bars.series.length, d.categories.length);
    assert.deepEqual(bars.xAxis[0].data, d.bins.map((b) => b.label));
    assert.equal(bars.xAxis[0].data[0], '0.0.0');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('sorting by a category reorders the bars, largest first', async () => {
    const { page } = await open(s.br, `${s.server.url}?focus=categories`);
    await page.waitForSelector('#panel-categories select[data-key="csort"]');
    const before = (await option(page, 'categories-bars')).xAxis[0].data;
    await page.selectOption('#panel-categories select[data-key="csort"]', 'MPI wait');
    await page.waitForFunction(() => window.perfscape.charts.get('categories-bars').getOption().xAxis[0].name.includes('MPI wait'));
    const o = await option(page, 'categories-bars');
    const order = o.xAxis[0].data;
    assert.notDeepEqual(order, before);
    const wait = o.series.find((x) => x.name === 'MPI wait').data.map((x) => x.value);
    for (let i = 1; i < wait.length; i++) assert.ok(wait[i - 1] >= wait[i], `${i}: ${wait[i - 1]} < ${wait[i]}`);
    // The same order as the API's, and the setting is in the URL.
    const d = await api(page, `?sort=${(await api(page)).categories.findIndex((c) => c.name === 'MPI wait')}`);
    assert.deepEqual(order, d.bins.map((b) => b.label));
    assert.equal((await selection(page)).csort, 'MPI wait');
    assert.match(page.url(), /csort=MPI/);
    await page.close();
  });

  test('a click on a bar selects its thread and its donut shows', async () => {
    const { page } = await open(s.br, `${s.server.url}?focus=categories`);
    await page.waitForSelector('#panel-categories .event-title b');
    const box = await page.evaluate(() => {
      const c = window.perfscape.charts.get('categories-bars');
      const [x, y] = c.convertToPixel({ xAxisIndex: 0, yAxisIndex: 0 }, [10, 1]);
      const r = c.getDom().getBoundingClientRect();
      return { x: r.left + x, y: r.top + y - 2 };
    });
    await page.mouse.click(box.x, box.y);
    await page.waitForFunction(() => window.perfscape.store.get().thread === '10.0.0');
    await page.waitForFunction(() => window.perfscape.charts.get('categories-donuts').getOption().series.length === 2);
    const o = await option(page, 'categories-donuts');
    const d = await api(page, '?thread=10.0.0');
    const t = o.series.find((x) => x.id === 'thread');
    const want = d.categories.map((c, i) => [c.name, d.thread.values[i]]).filter(([, v]) => v > 0);
    assert.deepEqual(t.data.map((x) => [x.name, x.value]), want);
    await page.close();
  });
});
