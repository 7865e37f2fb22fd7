// The timeline on TAU's own trace of the np4 stencil (tautrace.*.trc + events.*.edf): message
// lines drawn and counted against the API and against TAU's `tau_convert -dump` listing of the
// same records (360 MESSAGE_SEND), search by name walking next / previous (Enter /
// Shift+Enter), W/A/S/D about a point changing the window as computed here, the window and the
// selected slice restored from the URL after a reload, a process collapsed by a click on its
// label; screenshots at 1600×1000 and 1280×800 (in $TIMELINE_SHOTS, else the temp dir).

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { open, servedForSuite, shared } from './harness.mjs';

const run = path.join(shared, 'corpus/tau-real/mpi-stencil-np4-trace');
const pingpong = path.join(shared, 'corpus/otf2/pipit-ping-pong-otf2-2rank');
const SHOTS = process.env.TIMELINE_SHOTS ?? tmpdir();
const SIZES = [
  { width: 1600, height: 1000 },
  { width: 1280, height: 800 },
];

/** Records of TAU's dump named `event`: [time µs, node, parameter]. */
function dump(event) {
  return readFileSync(path.join(run, 'oracle/tau_convert-dump.txt'), 'utf8')
    .split('\n')
    .map((l) => /^\s*\d+\s+"([^"]*)"\s+(\d+)\s+(\d+)\s+\d+\s+(-?\d+)/.exec(l))
    .filter((m) => m && m[1].trim() === event)
    .map((m) => [Number(m[2]), Number(m[3]), Number(m[4])]);
}

/** The dump's first timestamp (µs): the trace's first event, where the timeline's times start. */
function dumpFirstUs() {
  const m = /first timestamp: (\d+)/.exec(readFileSync(path.join(run, 'oracle/tau_convert-dump.txt'), 'utf8'));
  return Number(m[1]);
}

/** The answer drawn, the window asked for and the plot's geometry. */
function state(page) {
  return page.evaluate(() => {
    const c = window.perfscape.charts.get('timeline');
    const d = window.perfscape.charts.get('timeline-data');
    const dz = c.getOption().dataZoom[0];
    const grid = c.getModel().getComponent('grid', 1).coordinateSystem.getRect();
    return { from: d.from_ns, to: d.to_ns, a: dz.startValue, b: dz.endValue, left: grid.x, plot: grid.width, top: grid.y, height: grid.height, url: location.search };
  });
}

/** Waits until an answer other than `before`'s window is drawn. */
async function redrawn(page, before) {
  await page.waitForFunction(
    (b) => {
      const d = window.perfscape.charts.get('timeline-data');
      return d && (d.from_ns !== b.from || d.to_ns !== b.to) && !document.querySelector('#panel-timeline.loading');
    },
    before,
    { timeout: 10000 },
  );
  await page.waitForTimeout(250);
}

/** Waits until the answer drawn shows the search hit `h`. */
async function shows(page, h) {
  await page.waitForFunction(
    (hit) => {
      const d = window.perfscape.charts.get('timeline-data');
      return d && d.from_ns <= hit.start_ns && hit.end_ns <= d.to_ns && !document.querySelector('#panel-timeline.loading');
    },
    h,
    { timeout: 10000 },
  );
  await page.waitForTimeout(250);
}

/** Message lines the chart drew: its `flows` series' items and the arrow heads on the canvas. */
function drawnLines(page) {
  return page.evaluate(() => {
    const c = window.perfscape.charts.get('timeline');
    const items = c.getOption().series.find((s) => s.id === 'flows').data.length;
    const heads = c.getZr().storage.getDisplayList(true).filter((el) => el.type === 'polygon' && /^rgba\(17, ?24, ?39/.test(String(el.style.fill))).length;
    return { items, heads };
  });
}

describe('timeline of the np4 TAU trace', () => {
  const s = servedForSuite(() => run);
  const sends = dump('MESSAGE_SEND');
  const isends = dump('MPI_Isend()')
    .filter((r) => r[2] === 1)
    .sort((x, y) => x[0] - y[0] || x[1] - y[1]);

  for (const size of SIZES) {
    test(`message lines, search, W/A/S/D, the window in the URL (${size.width}×${size.height})`, async () => {
      assert.equal(sends.length, 360);
      const { page, errors } = await open(s.br, `${s.server.url}?focus=timeline`, size);
      await page.waitForFunction(() => window.perfscape.charts.get('timeline-data'), null, { timeout: 20000 });
      // Message lines: the whole trace's 360 messages, as the API answers them and as drawn.
      const d = await page.evaluate(() => window.perfscape.charts.get('timeline-data').flows);
      assert.equal(d.total, sends.length);
      assert.equal(d.messages, sends.length);
      assert.equal(d.count.reduce((x, y) => x + y, 0), sends.length);
      assert.equal(d.reduced, sends.length - d.count.length);
      assert.ok(d.reduced > 0, 'at this width some messages share a line');
      const lines = await drawnLines(page);
      assert.equal(lines.items, d.count.length);
      assert.equal(lines.heads, d.count.length, 'one arrow head per line on the canvas');
      assert.equal(await page.getAttribute('#panel-timeline .event-title', 'data-messages'), '360');
      assert.match(await page.textContent('#panel-timeline .event-title'), new RegExp(`360 messages in the window as ${d.count.length} lines \\(${d.reduced} merged\\)`));
      await page.locator('#panel-timeline').screenshot({ path: path.join(SHOTS, `timeline-whole-${size.width}.png`) });

      // Search: Enter walks the MPI_Isend entries in time order, Shift+Enter back.
      const box = page.locator('#panel-timeline .timeline-search');
      await box.fill('MPI_Isend');
      const hits = [];
      for (let k = 1; k <= 3; k++) {
        await box.press('Enter');
        await page.waitForFunction((n) => document.querySelector('#panel-timeline .timeline-found')?.textContent === `${n} of 360`, k, { timeout: 10000 });
        const h = await page.evaluate(() => window.perfscape.charts.get('timeline-search').hit);
        await shows(page, h);
        // The k-th entry of the dump (µs, node).
        assert.deepEqual([Math.round(h.start_ns / 1000) + dumpFirstUs(), Number(h.thread.split('.')[0])], isends[k - 1].slice(0, 2), `match ${k}`);
        const st = await state(page);
        assert.ok(st.a <= h.start_ns && h.end_ns <= st.b, `the window [${st.a}, ${st.b}] shows match ${k} [${h.start_ns}, ${h.end_ns}]`);
        assert.match(decodeURIComponent(st.url), new RegExp(`tsel=${h.lane}:${Math.round(h.start_ns)}:`));
        hits.push(h);
      }
      await box.press('Shift+Enter');
      await page.waitForFunction(() => document.querySelector('#panel-timeline .timeline-found')?.textContent === '2 of 360', null, { timeout: 10000 });
      const back = await page.evaluate(() => window.perfscape.charts.get('timeline-search').hit);
      assert.deepEqual([back.lane, back.start_ns], [hits[1].lane, hits[1].start_ns]);
      await shows(page, back);
      const outlined = await page.evaluate(() => window.perfscape.charts.get('timeline').getOption().series.find((x) => x.id === 'selected').data.length);
      assert.equal(outlined, 1, 'the match is outlined');
      await page.locator('#panel-timeline').screenshot({ path: path.join(SHOTS, `timeline-search-${size.width}.png`) });

      // W/S about a point: the time under the mouse stays, the window narrows / widens by 0.8.
      const st0 = await state(page);
      const x = st0.left + st0.plot * 0.3;
      const chart = await page.locator('#panel-timeline .chart').boundingBox();
      await page.mouse.move(chart.x + x, chart.y + st0.top + st0.height / 2);
      const t = st0.a + ((st0.b - st0.a) * (x - st0.left)) / st0.plot;
      // Keys typed in the search box are text: the box lets go of the focus first.
      await page.evaluate(() => document.activeElement?.blur());
      await page.keyboard.press('w');
      await redrawn(page, st0);
      const st1 = await state(page);
      const px = (st0.b - st0.a) / st0.plot;
      assert.ok(Math.abs(st1.a - (t - (t - st0.a) * 0.8)) <= px && Math.abs(st1.b - (t + (st0.b - t) * 0.8)) <= px, `W: [${st1.a}, ${st1.b}] from [${st0.a}, ${st0.b}] about ${t}`);
      await page.keyboard.press('s');
      await redrawn(page, st1);
      const st2 = await state(page);
      assert.ok(Math.abs(st2.a - st0.a) <= 2 * px && Math.abs(st2.b - st0.b) <= 2 * px, 'S undoes W');
      // D pans later by 15% of the window, A back.
      await page.keyboard.press('d');
      await redrawn(page, st2);
      const st3 = await state(page);
      const shift = (st2.b - st2.a) * 0.15;
      assert.ok(Math.abs(st3.a - (st2.a + shift)) <= 1 && Math.abs(st3.b - st3.a - (st2.b - st2.a)) <= 1, `D: [${st3.a}, ${st3.b}]`);
      await page.keyboard.press('a');
      await redrawn(page, st3);
      const st4 = await state(page);
      assert.ok(Math.abs(st4.a - st2.a) <= 1, 'A pans back');

      // The window and the selected slice in the URL: a reload restores both.
      await page.waitForTimeout(300);
      const url = await page.evaluate(() => location.href);
      const tw = new URL(url).searchParams.get('tw');
      assert.ok(tw, `the window is in the URL: ${url}`);
      const [wa, wb] = tw.split('-').map(Number);
      await page.reload();
      await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
      await page.waitForFunction(() => window.perfscape.charts.get('timeline-data'), null, { timeout: 20000 });
      await page.waitForTimeout(500);
      const re = await state(page);
      assert.ok(Math.abs(re.from - wa) <= 1 && Math.abs(re.to - wb) <= 1, `restored [${re.from}, ${re.to}] from tw=${tw}`);
      assert.equal(await page.evaluate(() => window.perfscape.charts.get('timeline').getOption().series.find((x) => x.id === 'selected').data.length), 1, 'the selected slice restored');
      await page.locator('#panel-timeline').screenshot({ path: path.join(SHOTS, `timeline-restored-${size.width}.png`) });

      // A click on a process's label collapses it to one row; another expands it.
      const rows = () => page.evaluate(() => window.perfscape.charts.get('timeline').getOption().yAxis[1].data.length);
      const n0 = await rows();
      const geo = await state(page);
      await page.mouse.click(chart.x + 40, chart.y + geo.top + 4);
      await page.waitForFunction((n) => window.perfscape.charts.get('timeline').getOption().yAxis[1].data.length < n, n0, { timeout: 5000 });
      assert.match(new URL(await page.evaluate(() => location.href)).searchParams.get('tcol') ?? '', /\S/);
      await page.locator('#panel-timeline .timeline-collapse').click();
      await page.waitForFunction(() => window.perfscape.charts.get('timeline').getOption().yAxis[1].data.length === 4, null, { timeout: 5000 });
      await page.locator('#panel-timeline').screenshot({ path: path.join(SHOTS, `timeline-collapsed-${size.width}.png`) });
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});

describe('timeline of the OTF2 ping-pong (2 ranks)', () => {
  const s = servedForSuite(() => pingpong);
  test('message lines between the two ranks add up to the trace', async () => {
    const { page, errors } = await open(s.br, `${s.server.url}?focus=timeline`, SIZES[1]);
    await page.waitForFunction(() => window.perfscape.charts.get('timeline-data'), null, { timeout: 20000 });
    const d = await page.evaluate(() => window.perfscape.charts.get('timeline-data'));
    const f = d.flows;
    assert.ok(f.total > 0);
    assert.equal(f.messages, f.total);
    assert.equal(f.count.reduce((x, y) => x + y, 0), f.total);
    assert.ok(f.from_lane.every((l, i) => l !== f.to_lane[i]));
    assert.equal((await drawnLines(page)).items, f.count.length);
    await page.locator('#panel-timeline').screenshot({ path: path.join(SHOTS, 'timeline-otf2-pingpong-1280.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('timeline of 150 lanes: 64 lanes at a time', () => {
  // A Chrome trace written here: 150 processes of one thread, each with a `work` slice; one
  // `needle` slice on process 130 only.
  const s = servedForSuite(() => {
    const dir = mkdtempSync(path.join(tmpdir(), 'perfscape-lanes-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    const events = [];
    for (let p = 0; p < 150; p++) {
      events.push({ name: 'work', ph: 'X', pid: p, tid: 0, ts: 10 + p, dur: 1000 });
      if (p === 130) events.push({ name: 'needle', ph: 'X', pid: p, tid: 0, ts: 500, dur: 20 });
    }
    const file = path.join(dir, 'lanes.json');
    writeFileSync(file, JSON.stringify({ traceEvents: events }));
    return file;
  });

  test('▲ ▼ page through the lanes, the URL keeps the page, a search reaches a lane not shown', async () => {
    const { page, errors } = await open(s.br, `${s.server.url}?focus=timeline`, SIZES[1]);
    const range = () => page.textContent('#panel-timeline .timeline-lanes');
    await page.waitForFunction(() => /lanes 0–63 of 150/.test(document.querySelector('#panel-timeline .timeline-lanes')?.textContent ?? ''));
    await page.click('#panel-timeline .timeline-lanes-down');
    await page.waitForFunction(() => /lanes 64–127 of 150/.test(document.querySelector('#panel-timeline .timeline-lanes')?.textContent ?? ''));
    assert.match(await page.evaluate(() => location.search), /tl0=64/);
    const d = await page.evaluate(() => window.perfscape.charts.get('timeline-data'));
    assert.equal(d.lanes_from, 64);
    assert.equal(d.lanes.length, 64);
    // The search finds the needle on lane 130 and shows its page.
    await page.fill('#panel-timeline .timeline-search', 'needle');
    await page.press('#panel-timeline .timeline-search', 'Enter');
    await page.waitForFunction(() => /lanes 128–149 of 150/.test(document.querySelector('#panel-timeline .timeline-lanes')?.textContent ?? ''));
    assert.match(await page.evaluate(() => window.perfscape.store.get().tsel), /^130:/);
    await page.click('#panel-timeline .timeline-lanes-up');
    await page.waitForFunction(() => /lanes 64–127 of 150/.test(document.querySelector('#panel-timeline .timeline-lanes')?.textContent ?? ''));
    // A reload keeps the page of lanes.
    await page.reload();
    await page.waitForFunction(() => /lanes 64–127 of 150/.test(document.querySelector('#panel-timeline .timeline-lanes')?.textContent ?? ''));
    assert.match(await range(), /of 150/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
