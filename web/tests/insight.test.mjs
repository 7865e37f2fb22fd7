// Browser tests of the user events panel (issue 14, point 5) and the findings panel (point 3):
// the user-event table lists every user event with the numbers of /api/userevents, a click on a
// context event selects its callpath event and draws it per thread, a click on a bar selects the
// thread, and the selected thread's own columns appear. At 1600×1000 and 1280×800.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import path from 'node:path';
import { open, repo, selection, servedForSuite } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');

/** Waits until `f` (run in the page) is truthy. */
const until = (page, f, arg) => page.waitForFunction(f, arg, { timeout: 20000 });

describe('user events on the 64-rank run', () => {
  const s = servedForSuite(() => np64);

  for (const viewport of [{ width: 1600, height: 1000 }, { width: 1280, height: 800 }]) {
    const size = `${viewport.width}×${viewport.height}`;

    test(`user events at ${size}: the table, a context event selects its callpath, bars select a thread`, async () => {
      const { page, errors } = await open(s.br, s.server.url, viewport);
      const api = await page.evaluate(async () => (await fetch(`/api/userevents${window.location.search}`)).json());
      await page.locator('#panel-userevents').scrollIntoViewIfNeeded();
      await until(page, (n) => document.querySelectorAll('#panel-userevents tbody tr').length === n, api.rows.length);
      // The counts shown are the API's, row by row.
      const shown = await page.$$eval('#panel-userevents tbody tr', (trs) => trs.map((tr) => [Number(tr.dataset.id), tr.children[2].textContent]));
      for (const [id, text] of shown) {
        const row = api.rows.find((r) => r.id === id);
        assert.equal(Number(text.replace(/,/g, '')), row.all.count, row.name);
      }
      // The panel and its table fit the viewport's width; the numbers are in view.
      const box = await page.locator('#panel-userevents').boundingBox();
      assert.ok(box.x + box.width <= viewport.width + 1, `panel inside the page: ${JSON.stringify(box)}`);
      // A context event: selecting it selects its callpath event everywhere.
      const ctx = api.rows.find((r) => r.context_event !== null && r.name.startsWith('Message size sent to node'));
      assert.ok(ctx, 'the run has context user events');
      await page.click(`#panel-userevents tbody tr[data-id="${ctx.id}"]`);
      await until(page, (e) => window.perfscape.store.get().event === e, ctx.context_event);
      assert.equal((await selection(page)).uevent, ctx.id);
      // It is drawn per thread: one bar per thread that sampled it.
      await until(page, (n) => window.perfscape.charts.get('userevent-bars')?.getOption()?.series?.[0]?.data?.length === n, ctx.threads);
      assert.match(await page.textContent('#panel-userevents .userevents-head'), /per thread: mean/);
      // A click on the bars selects a thread; the table then has that thread's columns.
      const chart = await page.locator('#panel-userevents .userevents-bars').boundingBox();
      await page.mouse.click(chart.x + chart.width / 2, chart.y + chart.height - 40);
      await until(page, () => window.perfscape.store.get().thread !== null);
      const t = (await selection(page)).thread;
      await until(page, () => document.querySelectorAll('#panel-userevents thead th').length === 9);
      const heads = await page.$$eval('#panel-userevents thead th', (ths) => ths.map((th) => th.textContent));
      assert.ok(heads.some((h) => h.includes(`rank ${t.split('.')[0]}`)), `${heads} name ${t}`);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});

describe('findings and the architecture view on the 64-rank run', () => {
  const s = servedForSuite(() => np64);

  for (const viewport of [{ width: 1600, height: 1000 }, { width: 1280, height: 800 }]) {
    const size = `${viewport.width}×${viewport.height}`;

    test(`findings at ${size}: the list is the API's, a finding's show link selects its event and thread`, async () => {
      const { page, errors } = await open(s.br, s.server.url, viewport);
      const api = await page.evaluate(async () => (await fetch(`/api/findings${window.location.search}`)).json());
      assert.ok(api.findings.length > 0, 'the example has findings');
      await page.locator('#panel-findings').scrollIntoViewIfNeeded();
      await until(page, (n) => document.querySelectorAll('#panel-findings li.finding').length === n, api.findings.length);
      const titles = await page.$$eval('#panel-findings .finding-title', (els) => els.map((e) => e.textContent));
      assert.deepEqual(titles, api.findings.map((f) => f.title));
      assert.match(await page.textContent('#panel-findings .pop'), /parallel [0-9.]+ = load balance [0-9.]+ × communication [0-9.]+/);
      // The first finding with an event and a thread: its link selects both.
      const i = api.findings.findIndex((f) => f.event !== null && f.thread !== null);
      assert.ok(i >= 0, JSON.stringify(api.findings.map((f) => f.kind)));
      await page.click(`#panel-findings button.show[data-finding="${i}"]`);
      await until(page, (f) => window.perfscape.store.get().event === f.event && window.perfscape.store.get().thread === f.thread, api.findings[i]);
      // The view that shows it follows: the event view names the event.
      const name = await page.evaluate(async (e) => (await (await fetch(`/api/event/${e}${window.location.search}`)).json()).name, api.findings[i].event);
      await until(page, (n) => document.querySelector('#panel-event .event-title')?.textContent.includes(n), name);
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`architecture at ${size}: one donut per rank, arrows for the channels, a click selects the rank`, async () => {
      const { page, errors } = await open(s.br, s.server.url, viewport);
      const api = await page.evaluate(async () => (await fetch(`/api/architecture${window.location.search}`)).json());
      assert.equal(api.grouped_by, 'rank');
      assert.equal(api.processes.length, 64);
      assert.ok(api.channels.length > 0);
      await page.locator('#panel-architecture').scrollIntoViewIfNeeded();
      await until(page, () => (window.perfscape.charts.get('architecture')?.getOption()?.series?.length ?? 0) > 1);
      const drawn = await page.evaluate(() => {
        const o = window.perfscape.charts.get('architecture').getOption();
        return { pies: o.series.filter((x) => x.type === 'pie').length, links: o.series[0].links.length, centers: o.series.filter((x) => x.type === 'pie').map((x) => x.center) };
      });
      assert.equal(drawn.pies, 64);
      assert.equal(drawn.links, api.channels.length);
      // Every donut inside the chart.
      const box = await page.locator('#panel-architecture .chart').boundingBox();
      for (const [x, y] of drawn.centers) assert.ok(x > 0 && y > 0 && x < box.width && y < box.height, `${x},${y} in ${box.width}×${box.height}`);
      // A click on rank 5's donut selects rank 5.
      const [x, y] = drawn.centers[5];
      await page.mouse.click(box.x + x, box.y + y - 0.8 * 7);
      await until(page, () => window.perfscape.store.get().thread === '5.0.0');
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});

describe('the category of each event in the ranked table', () => {
  const s = servedForSuite(() => np64);

  test('with the category column chosen, every row names its event\'s category as /api/categories does', async () => {
    const { page, errors } = await open(s.br, `${s.server.url}?cols=name,max,category`);
    const api = await page.evaluate(async () => (await fetch(`/api/categories${window.location.search}`)).json());
    await until(page, () => [...document.querySelectorAll('#panel-ranked tbody tr')].some((tr) => tr.lastElementChild?.textContent.trim()));
    const rows = await page.$$eval('#panel-ranked tbody tr', (trs) => trs.map((tr) => [Number(tr.dataset.id), tr.lastElementChild.textContent.trim()]));
    assert.ok(rows.length > 5);
    for (const [id, text] of rows) assert.equal(text, api.categories[api.event_category[id]].name, `event ${id}`);
    assert.ok(rows.some(([, t]) => t === 'MPI collective'), JSON.stringify(rows));
    assert.deepEqual(errors, []);
    await page.close();
  });
});
