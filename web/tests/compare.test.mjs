// Browser test of runs side by side (`perfscape serve A B C`): the compare panel's table of
// B − A per event (sorted, added events marked), the diverging per-thread chart of the
// selected event with a legend that gives values, the run picker, and the selection linked
// with every other view; a dashboard's `$run` follows the run picker. Run: `npm run
// test:browser`.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, describe, test } from 'node:test';
import path from 'node:path';
import { browser, drawn, open, option, selection, serve, settled, shared } from './harness.mjs';

const tau = path.join(shared, 'corpus/tau-real');
const profile = path.join(tau, 'mpi-stencil-np4-profile');
const compinst = path.join(tau, 'mpi-stencil-np4-compinst-callpath');
const ss = path.join(shared, 'corpus/tau/taucmdr-mm-strong-scaling-1to8rank');

describe('two runs of the 4-rank stencil served side by side', () => {
  let server;
  let br;
  before(async () => {
    server = await serve(profile, [compinst, path.join(ss, 'np8')]);
    br = await browser();
  });
  after(async () => {
    await br?.close();
    server?.stop();
  });

  for (const viewport of [{ width: 1600, height: 1000 }, { width: 1280, height: 800 }]) {
    test(`diff table, diverging per-thread chart with values, sorting and linked selection at ${viewport.width}×${viewport.height}`, async () => {
      const { page, errors } = await open(br, server.url, viewport);
      // The table: every flat event of both runs, |B − A| first.
      const rows = await page.$$eval('#panel-compare tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())),
      );
      assert.equal(rows.length, 23, rows.map((r) => r[0]).join(' | '));
      assert.equal(rows[0][0], 'MPI_Allreduce()');
      assert.match(rows[0][4], /^-832\.8 ms/);
      const added = rows.filter((r) => r[1] === 'added').map((r) => r[0]);
      assert.equal(added.length, 5);
      const head = await page.textContent('#panel-compare .event-title');
      assert.match(head, /4 threads\) vs B = .*mpi-stencil-np4-compinst-callpath \(4 threads\)/);
      assert.match(head, /18 events in both, 27 added, 0 removed/);
      // Per thread: the top event's B − A on the 4 ranks, coloured by a diverging scale
      // centred on 0 whose ends say their values.
      const sel = await selection(page);
      assert.equal(rows.findIndex((r) => r[0] === 'MPI_Allreduce()'), 0);
      const bars = await option(page, 'compare-threads');
      assert.equal(bars.series[0].data.length, 4);
      const deltas = bars.series[0].data.map((d) => d.value);
      assert.deepEqual(deltas, [...deltas].sort((a, b) => b - a));
      assert.ok(deltas.every((d) => d < 0), `MPI_Allreduce got faster on every rank: ${deltas}`);
      const vm = bars.visualMap[0];
      assert.equal(vm.min, -vm.max);
      assert.deepEqual(vm.inRange.color, ['#2563eb', '#f3f4f6', '#dc2626']);
      assert.match(vm.text[0], /^\+\d.* increase$/);
      assert.match(vm.text[1], /^-\d.* decrease$/);
      // The diff heat map: the largest events × the 4 ranks, on the same diverging scale.
      const hm = await option(page, 'compare-heatmap');
      assert.equal(hm.series[0].type, 'heatmap');
      assert.equal(hm.xAxis[0].data.length, 4);
      assert.equal(hm.yAxis[0].data.at(-1), 'MPI_Allreduce()', 'largest |B − A| on top');
      assert.ok(hm.series[0].data.length >= 4 * 10, String(hm.series[0].data.length));
      const hv = hm.visualMap[0];
      assert.equal(hv.min, -hv.max);
      assert.deepEqual(hv.inRange.color, ['#2563eb', '#f3f4f6', '#dc2626']);
      assert.match(hv.text[0], /^\+\d/);
      // The cell of MPI_Allreduce on rank 0 is its B − A there (the per-thread chart's value).
      const top = hm.yAxis[0].data.length - 1;
      const cell = hm.series[0].data.find((d) => d[0] === 0 && d[1] === top);
      const rank0 = (await page.evaluate(() => fetch(`/api/diff/threads?event=${window.perfscape.store.get().event}`).then((r) => r.json()))).threads.find((t) => t.thread === '0.0.0');
      assert.ok(Math.abs(cell[2] - rank0.delta) < 1e-6, `${cell[2]} vs ${rank0.delta}`);
      // Both runs side by side per thread.
      await page.selectOption('#panel-compare select[data-key="dshow"]', 'both');
      await page.waitForFunction(() => window.perfscape.charts.get('compare-threads').getOption().series.length === 2);
      const both = await option(page, 'compare-threads');
      const perThread = (await page.evaluate(() => fetch(`/api/diff/threads?event=${window.perfscape.store.get().event}`).then((r) => r.json()))).threads;
      assert.deepEqual(both.series[0].data, perThread.map((x) => x.a));
      assert.deepEqual(both.series[1].data, perThread.map((x) => x.b));
      await page.selectOption('#panel-compare select[data-key="dshow"]', 'delta');
      await page.waitForFunction(() => window.perfscape.charts.get('compare-threads').getOption().series.length === 1);
      const pix = await drawn(page, '#panel-compare');
      assert.ok(pix.ink > 0.05 && pix.colours > 20, JSON.stringify(pix));
      // Sorting: B − A toggles |B − A| and signed B − A (regressions first).
      await page.click('#panel-compare th[data-key="delta"]');
      await page.waitForFunction(() => window.perfscape.store.get().dsort === 'delta');
      await settled(page);
      const signed = await page.$$eval('#panel-compare tbody tr td:nth-child(5)', (tds) => tds.map((t) => parseFloat(t.textContent)));
      assert.ok(signed[0] > 0 && signed[signed.length - 1] < 0, String(signed));
      assert.ok(new URL(page.url()).searchParams.get('dsort') === 'delta');
      // A click on a row selects the event in run A: the ranked table and the event view follow.
      const target = await page.$$eval('#panel-compare tbody tr', (trs) => trs.findIndex((tr) => tr.textContent.includes('MPI_Waitall()')));
      await page.click(`#panel-compare tbody tr:nth-child(${target + 1})`);
      await page.waitForFunction(() => document.querySelector('#panel-ranked tr.selected')?.textContent.includes('MPI_Waitall()'));
      assert.notEqual((await selection(page)).event, sel.event);
      await page.waitForFunction(() => window.perfscape.charts.get('compare-threads').getOption().title[0].text.startsWith('MPI_Waitall()'));
      await page.close();
      assert.deepEqual(errors, []);
    });
  }

  test('call tree mode: both trees as one, opened along the regression path; a click selects the event', async () => {
    const { page, errors } = await open(br, `${server.url}?cmpview=tree`);
    const tree = await page.evaluate(() => fetch('/api/diff/calltree').then((r) => r.json()));
    const rows = await page.$$eval('#panel-compare tbody tr', (trs) => trs.map((tr) => ({ node: Number(tr.dataset.node), regression: tr.classList.contains('regression'), text: tr.textContent })));
    // Every node of the regression path is shown and marked; the roots are shown.
    for (const i of tree.regression_path) assert.ok(rows.some((r) => r.node === i && r.regression), `node ${i}`);
    for (const r of tree.roots) assert.ok(rows.some((x) => x.node === r));
    // Nodes only B has are marked added (the compiler-instrumented timers).
    assert.ok(tree.nodes.some((n) => n.change === 'added'));
    // Opening a node shows its callees.
    const closed = rows.find((r) => tree.nodes[r.node].children.length > 0 && !rows.some((x) => tree.nodes[x.node].parent === r.node));
    if (closed) {
      await page.click(`#panel-compare tr[data-node="${closed.node}"] .toggle`);
      const after = await page.$$eval('#panel-compare tbody tr', (trs) => trs.map((tr) => Number(tr.dataset.node)));
      for (const c of tree.nodes[closed.node].children) assert.ok(after.includes(c));
    }
    // A click on a context of run A selects its event in every view.
    const before = (await selection(page)).event;
    const shown = await page.$$eval('#panel-compare tbody tr[data-id]:not([data-id=""])', (trs) => trs.map((tr) => Number(tr.dataset.node)));
    const target = shown.find((i) => tree.nodes[i].event_a !== before);
    assert.ok(target !== undefined, 'a shown context of run A other than the selected one');
    await page.click(`#panel-compare tr[data-node="${target}"] td.name`);
    await page.waitForFunction((id) => window.perfscape.store.get().event === id, tree.nodes[target].event_a);
    await page.close();
    assert.deepEqual(errors, []);
  });

  test('the run picker compares with another run; a run with other threads is said', async () => {
    const { page, errors } = await open(br, `${server.url}?cmp=2&kind=inclusive`);
    const head = await page.textContent('#panel-compare .event-title');
    assert.match(head, /taucmdr-mm-strong-scaling-1to8rank\/np8 \(8 threads\)/);
    // The stencil and the matrix multiply share only the TAU root and the MPI calls.
    const names = await page.$$eval('#panel-compare tbody tr td.name', (tds) => tds.map((t) => t.textContent.trim()));
    assert.ok(names.includes('MPI_Init()'));
    assert.match(head, /per thread/);
    await page.close();
    assert.deepEqual(errors, []);
  });
});

describe('the eight strong-scaling runs served together', () => {
  let server;
  let br;
  before(async () => {
    server = await serve(path.join(ss, 'np1'), [2, 3, 4, 5, 6, 7, 8].map((k) => path.join(ss, `np${k}`)));
    br = await browser();
  });
  after(async () => {
    await br?.close();
    server?.stop();
  });

  test('the scaling view draws the selected event against p on log-log axes with its Extra-P model, speedup and efficiency', async () => {
    const { page, errors } = await open(br, server.url, { width: 1280, height: 800 });
    const sel = await selection(page);
    const api = await page.evaluate(() => fetch('/api/scaling').then((r) => r.json()));
    assert.deepEqual(api.counts, [1, 2, 3, 4, 5, 6, 7, 8]);
    const row = api.rows.find((r) => r.event === sel.event);
    assert.ok(row && row.model, JSON.stringify(row));
    const ll = await option(page, 'scaling-loglog');
    assert.equal(ll.xAxis[0].type, 'log');
    assert.equal(ll.yAxis[0].type, 'log');
    assert.deepEqual(ll.series[0].data.map((p) => p[0]), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(ll.series[0].data.map((p) => p[1]), row.values);
    assert.equal(ll.series[1].data.length, 64, 'the model curve');
    const head = await page.textContent('#panel-scaling .event-title');
    assert.ok(head.includes(`Extra-P model: ${row.model}`), head);
    const sp = await option(page, 'scaling-speedup');
    assert.deepEqual(sp.series[0].data.map((p) => p[1]), row.speedup);
    assert.deepEqual(sp.series[2].data.map((p) => p[1]), row.efficiency);
    assert.equal(sp.series[0].data[0][1], 1, 'speedup 1 at the smallest count');
    assert.ok((await drawn(page, '#panel-scaling')).colours > 10);
    await page.close();
    assert.deepEqual(errors, []);
  });
});

describe('a dashboard panel follows the compared run ($run)', () => {
  let server;
  let br;
  let dir;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'perfscape-run-'));
    const file = path.join(dir, 'runs.toml');
    writeFileSync(
      file,
      `[[panel]]\nview = "compare"\nspan = 2\nheight = 400\n\n[[panel]]\ntitle = "threads of B"\ncomponent = "table"\nsql = "SELECT COUNT(*) AS threads FROM threads WHERE run = $run"\n`,
    );
    server = await serve(profile, [compinst, path.join(ss, 'np8'), '--dashboard', file]);
    br = await browser();
  });
  after(async () => {
    await br?.close();
    server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('$run is the compare panel\'s B: its panel asks again when B changes', async () => {
    const { page, errors } = await open(br, `${server.url}?dashboard=0`);
    const count = () => page.textContent('#panel-dashb tbody tr td');
    await page.waitForSelector('#panel-dashb tbody tr');
    // The threads of each served run, from the server's own description of them.
    const compared = await page.evaluate(() => fetch('/api/run').then((r) => r.json()).then((r) => r.compared.map((c) => c.threads)));
    assert.deepEqual(compared, [4, 8]);
    assert.equal((await count()).trim(), String(compared[0]));
    await page.evaluate(() => window.perfscape.store.set({ cmp: 2 }));
    await page.waitForFunction((n) => document.querySelector('#panel-dashb tbody tr td')?.textContent.trim() === n, String(compared[1]));
    assert.deepEqual(errors, []);
    await page.close();
  });
});
