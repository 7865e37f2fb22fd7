// Browser tests: every view draws real data on a real run and on a 4,096-rank run, the views are
// linked through one selection, the URL reproduces the state, and a failed load is explained.
// Run: `npm run test:browser` (needs the perfscape debug binary and Debian's chromium).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import path from 'node:path';
import { browser, bigRun, drawn, open, option, repo, selection, serve, settled } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');

describe('64-rank TAU run (examples/)', () => {
  let server;
  let br;
  before(async () => {
    server = await serve(np64);
    br = await browser();
  });
  after(async () => {
    await br?.close();
    server?.stop();
  });

  test('every view draws real data', async () => {
    const { page, errors } = await open(br, server.url);
    // Ranked table: 18 flat events, MPI_Init() first (exclusive TIME).
    const names = await page.$$eval('#panel-ranked tbody tr td.name', (tds) => tds.map((t) => t.textContent));
    assert.equal(names.length, 18);
    assert.equal(names[0], 'MPI_Init()');
    // Heat map: event rows × 64 thread columns, coloured.
    const hm = await option(page, 'heatmap');
    assert.equal(hm.xAxis[0].data.length, 64);
    assert.ok(hm.yAxis[0].data.includes('MPI_Allreduce()'));
    assert.ok(hm.series[0].data.length > 18 * 60);
    const hmPix = await drawn(page, '#panel-heatmap');
    assert.ok(hmPix.ink > 0.3 && hmPix.colours > 50, JSON.stringify(hmPix));
    // Overview: one strip of 18 rows.
    const ov = await option(page, 'overview');
    assert.equal(ov.series.length, 1);
    assert.equal(ov.yAxis[0].data.length, 18);
    assert.ok((await drawn(page, '#panel-overview')).colours > 20);
    // Event view: the top event on 64 threads, sorted bars with min/max marks, histogram.
    const title = await page.textContent('#panel-event .event-title');
    assert.match(title, /MPI_Init\(\).*64 threads/);
    const bars = await option(page, 'event-bars');
    assert.equal(bars.series[0].data.length, 64);
    const vals = bars.series[0].data.map((d) => d.value);
    assert.deepEqual(vals, [...vals].sort((a, b) => b - a));
    assert.equal(bars.series[0].markPoint.data.length, 2);
    const hist = await option(page, 'event-hist');
    assert.equal(hist.series[0].data.reduce((a, b) => a + b, 0), 64);
    // Call tree: rooted at .TAU application with inclusive values.
    const tree = await page.$$eval('#panel-calltree tbody tr td.name', (tds) => tds.map((t) => t.textContent.replace(/[▸▾]/g, '').trim()));
    assert.equal(tree[0], '.TAU application');
    assert.ok(tree.includes('main int (int, char **)'));
    // Terrain: a WebGL surface (SwiftShader) with labelled peaks.
    const tr = await option(page, 'terrain');
    assert.equal(tr.series[0].type, 'surface');
    assert.equal(tr.series[1].data.length, 5);
    const trPix = await drawn(page, '#panel-terrain .chart');
    assert.ok(trPix.ink > 0.05 && trPix.colours > 30, JSON.stringify(trPix));
    assert.match(await page.textContent('#panel-terrain .legend'), /MPI_Init\(\)/);
    // Run information.
    const info = await page.textContent('#panel-runinfo');
    assert.match(info, /64 \(64 nodes\/ranks\)/);
    assert.match(info, /every file loaded/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('selecting an event in the ranked table moves every view to it', async () => {
    const { page } = await open(br, server.url);
    await page.click('#panel-ranked tbody tr:has-text("MPI_Waitall()")');
    await settled(page);
    const sel = await selection(page);
    const id = sel.event;
    assert.ok(page.url().includes(`event=${id}`));
    // Heat map outlines the event's row.
    const hm = await option(page, 'heatmap');
    assert.ok(hm.graphic[0].elements.length >= 1);
    // Event view shows it.
    assert.match(await page.textContent('#panel-event .event-title'), /MPI_Waitall\(\)/);
    // Call tree reveals and highlights its callpath node.
    const treeSel = await page.$$eval('#panel-calltree tr.selected td.name', (tds) => tds.map((t) => t.textContent.replace(/[▸▾]/g, '').trim()));
    assert.deepEqual(treeSel, ['MPI_Waitall()']);
    // Terrain draws the event's row as a line.
    const tr = await option(page, 'terrain');
    assert.ok(tr.series.some((s) => s.type === 'line3D'));
    // Click a heat-map cell of MPI_Waitall(): selects that thread; the event view marks it.
    const pt = await page.evaluate(() => {
      const c = window.perfscape.charts.get('heatmap');
      const o = c.getOption();
      const row = o.yAxis[0].data.indexOf('MPI_Waitall()');
      return c.convertToPixel({ gridIndex: 0 }, [10, row]);
    });
    const box = await page.locator('#panel-heatmap .chart').boundingBox();
    await page.mouse.click(box.x + pt[0], box.y + pt[1]);
    await settled(page);
    const after = await selection(page);
    assert.equal(after.event, id);
    assert.equal(after.thread, '10.0.0');
    const bars = await option(page, 'event-bars');
    assert.ok(bars.series[0].data.some((d) => d.itemStyle.color === '#111'));
    // Call tree in the selected thread's scope.
    await page.selectOption('#panel-calltree select', 'thread');
    await settled(page);
    assert.match(await page.textContent('#panel-calltree thead'), /\(rank 10\)/);
    await page.close();
  });

  test('the URL reproduces what one sees', async () => {
    const { page } = await open(br, `${server.url}?kind=inclusive&event=5&thread=3.0.0&focus=heatmap&t0=0&t1=8`);
    const sel = await selection(page);
    assert.equal(sel.kind, 'inclusive');
    assert.equal(sel.event, 5);
    assert.equal(sel.thread, '3.0.0');
    assert.ok(await page.isVisible('#panel-heatmap'));
    assert.ok(!(await page.isVisible('#panel-ranked')));
    const hm = await option(page, 'heatmap');
    assert.equal(hm.xAxis[0].data.length, 8);
    // Zoomed in far enough: numbers are overlaid on the cells.
    assert.equal(hm.series[0].label.show, true);
    await page.close();
  });
});

describe('4,096-rank run from tau_scale.py', () => {
  let server;
  let br;
  before(async () => {
    server = await serve(bigRun(4096));
    br = await browser();
  });
  after(async () => {
    await br?.close();
    server?.stop();
  });

  test('every view draws, reduced to screen resolution', async () => {
    const { page, errors } = await open(br, server.url);
    const hm = await option(page, 'heatmap');
    const cols = hm.xAxis[0].data.length;
    assert.ok(cols > 50 && cols < 4096, `heat map columns ${cols}: reduced, not 4,096`);
    assert.match(hm.xAxis[0].name, /of 4096/);
    assert.ok((await drawn(page, '#panel-heatmap')).colours > 50);
    const bars = await option(page, 'event-bars');
    assert.ok(bars.series[0].data.length >= 64);
    assert.ok((await drawn(page, '#panel-terrain .chart')).colours > 30);
    assert.match(await page.textContent('#panel-runinfo'), /4,096 \(4,096 nodes\/ranks\)/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('source lines: the overview skips empty runs and drives the heat map', async () => {
    const { page } = await open(br, `${server.url}?rows=lines&skip=20&bin=4&strips=3`);
    const ov = await option(page, 'overview');
    assert.equal(ov.series.length, 3);
    const info = await page.textContent('#panel-overview .note');
    const m = info.match(/(\d+) rows → (\d+) \((\d+) empty skipped/);
    assert.ok(m && Number(m[3]) > 1000, info);
    // Click a row of the first strip: the heat map window moves there.
    const before = await selection(page);
    const pt = await page.evaluate(() => window.perfscape.charts.get('overview').convertToPixel({ seriesIndex: 0 }, [0, 5]));
    const box = await page.locator('#panel-overview .chart').boundingBox();
    await page.mouse.click(box.x + pt[0], box.y + pt[1]);
    await settled(page);
    const after = await selection(page);
    assert.notEqual(after.r0, before.r0);
    const hm = await option(page, 'heatmap');
    assert.match(hm.yAxis[0].data[0], /stencil\.c:\d+/);
    await page.close();
  });
});

test('a run that fails to load shows the error in the page', async () => {
  const server = await serve('/no/such/run');
  const br = await browser();
  try {
    const { page } = await open(br, server.url);
    const text = await page.textContent('.fatal');
    assert.match(text, /could not be loaded/);
    assert.match(text, /\/no\/such\/run/);
  } finally {
    await br.close();
    server.stop();
  }
});

describe('thread axis on the 64-rank run', () => {
  let server;
  let br;
  before(async () => {
    server = await serve(np64);
    br = await browser();
  });
  after(async () => {
    await br?.close();
    server?.stop();
  });

  test('order by similarity draws cluster boundaries; first-N and representatives subsets', async () => {
    const { page, errors } = await open(br, `${server.url}?threads=cluster&clusters=4`);
    const hm = await option(page, 'heatmap');
    assert.match(hm.xAxis[0].name, /of 64 \(4 clusters\)/);
    const lines = hm.graphic[0].elements.filter((e) => e.type === 'line');
    assert.ok(lines.length >= 1 && lines.length <= 3, `cluster boundaries: ${lines.length}`);
    assert.match(await page.textContent('#panel-heatmap .status'), /4 clusters of/);
    // Representatives: at most 3 threads per cluster.
    await page.selectOption('#panel-heatmap .tools select >> nth=1', 'reps');
    await settled(page);
    const reps = await option(page, 'heatmap');
    const n = reps.xAxis[0].data.length;
    assert.ok(n >= 4 && n <= 12, `representatives: ${n}`);
    // By the value of the selected event, first 8 threads: the event view's max thread comes first.
    await page.selectOption('#panel-heatmap .tools select >> nth=0', 'value');
    await page.selectOption('#panel-heatmap .tools select >> nth=1', 'top');
    await page.fill('#panel-heatmap .tools input[type=number] >> nth=1', '8');
    await page.press('#panel-heatmap .tools input[type=number] >> nth=1', 'Enter');
    await settled(page);
    const top = await option(page, 'heatmap');
    assert.equal(top.xAxis[0].data.length, 8);
    const sel = await selection(page);
    assert.equal(sel.threads, 'value');
    const ev = await option(page, 'event-bars');
    assert.equal(top.xAxis[0].data[0], ev.xAxis[0].data[0], 'the first column is the thread with the largest value');
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('65,536-rank run from tau_scale.py', () => {
  let server;
  let br;
  before(async () => {
    server = await serve(bigRun(65536));
    br = await browser();
  }, { timeout: 600000 });
  after(async () => {
    await br?.close();
    server?.stop();
  });

  test('every view draws at screen resolution; the thread axis can be clustered', { timeout: 600000 }, async () => {
    const { page, errors } = await open(br, server.url);
    const hm = await option(page, 'heatmap');
    assert.match(hm.xAxis[0].name, /of 65536/);
    assert.ok(hm.xAxis[0].data.length <= 512, `heat map columns ${hm.xAxis[0].data.length}`);
    assert.ok((await drawn(page, '#panel-heatmap')).colours > 50);
    assert.ok((await drawn(page, '#panel-overview')).colours > 20);
    assert.ok((await drawn(page, '#panel-terrain .chart')).colours > 30);
    const bars = await option(page, 'event-bars');
    assert.ok(bars.series[0].data.length <= 4096, 'per-thread bars are reduced');
    assert.match(await page.textContent('#panel-event .event-title'), /65,536 threads/);
    assert.match(await page.textContent('#panel-runinfo'), /65,536 \(65,536 nodes\/ranks\)/);
    // Cluster the 65,536 threads.
    await page.selectOption('#panel-heatmap .tools select >> nth=0', 'cluster');
    await page.waitForFunction(() => /clusters of/.test(document.querySelector('#panel-heatmap .status')?.textContent ?? ''), null, { timeout: 120000 });
    const cl = await option(page, 'heatmap');
    assert.match(cl.xAxis[0].name, /8 clusters/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

test('shared session: two browsers see each other\'s selection, cursor and presence; no token, no entry', async () => {
  const server = await serve(np64, ['--share']);
  const br = await browser();
  try {
    assert.match(server.url, /\?token=[0-9a-f]{32}$/);
    const a = await open(br, server.url);
    const b = await open(br, server.url);
    await b.page.waitForFunction(() => document.querySelectorAll('#presence .peer').length === 2);
    await a.page.waitForFunction(() => document.querySelectorAll('#presence .peer').length === 2);
    // A selects an event: B's views follow.
    await a.page.click('#panel-ranked tbody tr:has-text("MPI_Waitall()")');
    const id = (await selection(a.page)).event;
    await b.page.waitForFunction((e) => window.perfscape.store.get().event === e, id, { timeout: 2000 });
    await b.page.waitForFunction(() => /MPI_Waitall\(\)/.test(document.querySelector('#panel-event .event-title')?.textContent ?? ''));
    // A's pointer over the heat map appears on B.
    const box = await a.page.locator('#panel-heatmap').boundingBox();
    await a.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await a.page.mouse.move(box.x + box.width / 2 + 20, box.y + box.height / 2 + 10);
    await b.page.waitForSelector('#panel-heatmap .remote-cursor', { timeout: 2000 });
    // Without the token: 403.
    const ctx = await br.newContext();
    const anon = await ctx.newPage();
    const resp = await anon.goto(server.url.replace(/\?token=.*/, ''));
    assert.equal(resp.status(), 403);
    await ctx.close();
    assert.deepEqual([...a.errors, ...b.errors], []);
  } finally {
    await br.close();
    server.stop();
  }
});

test('a run observed over time: sample slider, trend, Kiviat tube and point cloud follow the sample', async () => {
  const run = path.join(process.env.PERFSCAPE_SHARED ?? path.join(repo, '../shared'), 'corpus/tau-real/mpi-stencil-np8-snapshot');
  const server = await serve(run);
  const br = await browser();
  try {
    const { page, errors } = await open(br, server.url);
    // 21 samples; the slider's right end is the final state.
    assert.match(await page.textContent('#samplebar'), /final state · 21 samples/);
    assert.equal(await page.getAttribute('#sample-slider', 'max'), '21');
    // Trend of the selected (top) event over the 21 samples, marker at the end.
    const tr = await option(page, 'trend');
    assert.equal(tr.xAxis[0].data.length, 21);
    assert.equal(tr.xAxis[0].data[0], 'iteration 20');
    const mean = tr.series.find((s) => s.name === 'mean');
    const max = tr.series.find((s) => s.name === 'max');
    assert.equal(mean.data.length, 21);
    assert.ok(max.data.every((v, i) => v >= mean.data[i]));
    assert.equal(mean.markLine.data[0].xAxis, 20);
    // The final point equals the ranked table's maximum of the event (the final state).
    const sel = await selection(page);
    const ev = await page.evaluate((e) => fetch(`/api/event/${e}`).then((r) => r.json()), sel.event);
    assert.equal(max.data[20], ev.stats.max);
    // Kiviat tube: polygons (line3D) stacked along the samples; point cloud of the 8 threads.
    const kv = await option(page, 'kiviat');
    assert.ok(kv.series.filter((s) => s.type === 'line3D').length > 21);
    // Its tooltip names the thread as the page does: `rank 3`, not `3.0.0`.
    const tip = await page.evaluate(() => window.perfscape.charts.get('kiviat').getOption().tooltip[0].formatter({ seriesName: '3.0.0 (vertices)' }));
    assert.match(tip, /<b>rank 3<\/b> \(vertices\)/);
    const kvPix = await drawn(page, '#panel-kiviat .chart');
    assert.ok(kvPix.ink > 0.02 && kvPix.colours > 10, JSON.stringify(kvPix));
    const pc = await option(page, 'pointcloud');
    assert.equal(pc.series[0].data.length, 8);
    assert.ok((await drawn(page, '#panel-pointcloud .chart')).colours > 10);
    // Move to sample 5 with the slider: the table shows sample 5's values, the marker moves.
    await page.$eval('#sample-slider', (el) => {
      el.value = '5';
      el.dispatchEvent(new Event('input'));
    });
    await page.waitForFunction(() => window.perfscape.store.get().sample === 5);
    assert.ok(page.url().includes('sample=5'));
    await page.waitForFunction(() => /iteration 120/.test(document.querySelector('#samplebar')?.textContent ?? ''));
    const at5 = await page.evaluate(() => fetch('/api/events?sample=5').then((r) => r.json()));
    await page.waitForFunction(
      (want) => document.querySelector('#panel-ranked tbody tr td.name')?.textContent === want,
      at5.rows[0].name,
    );
    const tr5 = await option(page, 'trend');
    assert.equal(tr5.series.find((s) => s.name === 'mean').markLine.data[0].xAxis, 5);
    const ev5 = await page.evaluate((e) => fetch(`/api/event/${e}?sample=5`).then((r) => r.json()), sel.event);
    await page.waitForFunction(
      (want) => window.perfscape.charts.get('event-bars').getOption().series[0].data[0].value === want,
      ev5.stats.max,
    );
    // Deltas: the trend shows per-interval values (they sum to the cumulative final value).
    await page.selectOption('#samplebar select', 'delta');
    await page.waitForFunction(() => /change since the previous sample/.test(document.querySelector('#panel-trend .event-title')?.textContent ?? ''));
    const td = await option(page, 'trend');
    const sumD = td.series.find((s) => s.name === 'sum').data.reduce((a, b) => a + (b ?? 0), 0);
    const sumC = tr.series.find((s) => s.name === 'sum').data[20];
    assert.ok(Math.abs(sumD - sumC) <= 1e-6 * sumC, `${sumD} vs ${sumC}`);
    // The cloud's y axis is chosen in its tools.
    const y0 = (await option(page, 'pointcloud')).yAxis3D[0].name;
    const pick = await page.$eval('#panel-pointcloud .tools select', (el) => ({ value: el.options[4].value, text: el.options[4].textContent }));
    await page.selectOption('#panel-pointcloud .tools select >> nth=0', pick.value);
    await page.waitForFunction((t) => window.perfscape.charts.get('pointcloud').getOption().yAxis3D[0].name.startsWith(t.slice(0, 10)), pick.text);
    assert.notEqual((await option(page, 'pointcloud')).yAxis3D[0].name, y0);
    assert.match(page.url(), /cloud=/);
    // The selected thread is drawn as its own, larger point in the cloud.
    await page.evaluate(() => window.perfscape.store.set({ thread: '3.0.0' }));
    await page.waitForFunction(() => window.perfscape.charts.get('pointcloud').getOption().series.length === 2);
    assert.deepEqual(errors, []);
  } finally {
    await br.close();
    server.stop();
  }
});

test('live: the trend grows as the samples of a replay arrive, pushed over the WebSocket', { timeout: 180000 }, async () => {
  const run = path.join(process.env.PERFSCAPE_SHARED ?? path.join(repo, '../shared'), 'corpus/tau-real/mpi-stencil-np8-snapshot');
  // The run's 21 samples span about 1.4 s; at a tenth of its pace they arrive over ~14 s.
  const server = await serve(run, ['--replay', '--speed', '0.1']);
  const br = await browser();
  try {
    const page = await br.newPage({ viewport: { width: 1600, height: 1000 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(server.url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
    assert.match(await page.textContent('#samplebar'), /live/);
    const lengths = [];
    for (let i = 0; i < 120; i++) {
      const n = await page.evaluate(() => window.perfscape.charts.get('trend').getOption().xAxis?.[0]?.data?.length ?? 0);
      if (lengths[lengths.length - 1] !== n) lengths.push(n);
      if (n === 21 && !(await page.evaluate(() => window.perfscape.ctx.run.live))) break;
      await page.waitForTimeout(250);
    }
    assert.equal(lengths[lengths.length - 1], 21, `trend lengths seen: ${lengths}`);
    assert.ok(lengths.length >= 3 && lengths[0] < 21, `the plot grew while we watched: ${lengths}`);
    assert.deepEqual([...lengths].sort((a, b) => a - b), lengths, 'it only grows');
    // The samples came over the WebSocket (those before the page connected were in its first
    // answers; exactly-once delivery is tested in crates/perfscape-server/tests/live.rs).
    const pushed = await page.evaluate(() => window.perfscapeLive);
    assert.ok(pushed.samples >= 1, JSON.stringify(pushed));
    // Finished: the slider's end is the final state, the badge is gone.
    await page.waitForFunction(() => /final state · 21 samples/.test(document.querySelector('#samplebar')?.textContent ?? ''));
    assert.doesNotMatch(await page.textContent('#samplebar'), /● live/);
    assert.deepEqual(errors, []);
  } finally {
    await br.close();
    server.stop();
  }
});

test('timeline of a real Chrome trace: lanes per thread, zoom, flagged events, click selects', async () => {
  const run = path.join(process.env.PERFSCAPE_SHARED ?? path.join(repo, '../shared'), 'corpus/tau-real/mpi-stencil-np4-trace/trace.chrome.json');
  const server = await serve(run);
  const br = await browser();
  try {
    const { page, errors } = await open(br, server.url);
    // Four lanes (ranks), their slices drawn, the selected event flagged in the top strip.
    const tl = await option(page, 'timeline');
    const slices = tl.series.find((s) => s.id === 'slices');
    assert.ok(slices.data.length > 50, `slices: ${slices.data.length}`);
    // Each process's first lane carries its collapse marker (▾).
    assert.deepEqual(tl.yAxis[1].data.filter((l) => l !== '').map((l) => l.replace(/^[▾▸]?\s*/, '').split(' ')[0]), ['0.0.0', '1.0.0', '2.0.0', '3.0.0']);
    const sel = await selection(page);
    const top = await page.evaluate((e) => fetch(`/api/event/${e}`).then((r) => r.json()), sel.event);
    assert.match(await page.textContent('#panel-timeline .event-title'), new RegExp(`inside ${top.name.replace(/[()]/g, '\\$&')}`));
    const occ = tl.series.find((s) => s.id === 'occupancy').data.map((d) => d[1]);
    assert.ok(Math.max(...occ) > 3.9, 'all 4 ranks are inside the top event at some time');
    const pix = await drawn(page, '#panel-timeline .chart');
    assert.ok(pix.ink > 0.1 && pix.colours > 10, JSON.stringify(pix));
    // Zoom in with the wheel: a narrower window is fetched.
    const box = await page.locator('#panel-timeline .chart').boundingBox();
    await page.mouse.move(box.x + box.width * 0.9, box.y + box.height * 0.5);
    for (let i = 0; i < 8; i++) await page.mouse.wheel(0, -400);
    await page.waitForFunction(() => !/window 0 µs – /.test(document.querySelector('#panel-timeline .event-title')?.textContent ?? ''), null, { timeout: 10000 });
    // Click rank 2's MPI_Init() slice: that event and thread are selected in every view.
    await page.evaluate(() => window.perfscape.store.set({ event: null }));
    await page.evaluate(() => {
      // Back to the whole trace at full resolution for a deterministic click target.
      window.perfscape.charts.get('timeline').dispatchAction({ type: 'dataZoom', start: 0, end: 100 });
    });
    await page.waitForFunction(() => /window 0 µs – /.test(document.querySelector('#panel-timeline .event-title')?.textContent ?? ''), null, { timeout: 10000 });
    const target = await page.evaluate(() => {
      const c = window.perfscape.charts.get('timeline');
      const o = c.getOption();
      const s = o.series.find((x) => x.id === 'slices');
      const names = window.perfscape.charts.get('timeline-data').names;
      const d = s.data.map((x) => x.value).filter((v) => v[4] === 2 && v[3] === 1 && names[v[5]] === 'MPI_Init()')[0];
      return c.convertToPixel({ xAxisIndex: 1, yAxisIndex: 1 }, [(d[0] + d[1]) / 2, d[2]]);
    });
    const cbox = await page.locator('#panel-timeline .chart').boundingBox();
    await page.mouse.click(cbox.x + target[0], cbox.y + target[1]);
    await page.waitForFunction(() => window.perfscape.store.get().thread === '2.0.0');
    const init = (await page.evaluate(() => fetch('/api/events').then((r) => r.json()))).rows.find((r) => r.name === 'MPI_Init()');
    assert.equal((await selection(page)).event, init.id);
    assert.deepEqual(errors, []);
  } finally {
    await br.close();
    server.stop();
  }
});
