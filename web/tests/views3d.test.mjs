// Browser tests of issue 18, points 6 and 7: the 3-D views are pickable and readable (a click at
// a terrain cell's, a peak's, a point's or a Kiviat vertex's place on the screen selects what
// was drawn there; an event-view click selects the thread of the bar under the cursor, on 64
// and on 4,096 ranks), and the timeline zooms about the cursor (wheel, W/S), pans (A/D), labels
// a slice only where its name fits, and its strip title's lines do not overlap. At 1600×1000
// and 1280×800. Run: `npm run test:browser` (PERFSCAPE_BIG_RUN: a 4,096-rank run made once).

import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { bigRun, open, option, repo, selection, servedForSuite, settled, shared } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');
const np8 = path.join(shared, 'corpus/tau-real/mpi-stencil-np8-snapshot');
const trace = path.join(shared, 'corpus/tau-real/mpi-stencil-np4-trace/trace.chrome.json');
const SIZES = [
  { width: 1600, height: 1000 },
  { width: 1280, height: 800 },
];

/** Screen positions (in the chart's element) of data points of a chart's grid3D: the
 * coordinate system's world point through the camera's view and projection. */
function project(page, name, points) {
  return page.evaluate(
    ([n, pts]) => {
      const chart = window.perfscape.charts.get(n);
      const cs = chart.getModel().getComponent('grid3D', 0).coordinateSystem;
      const vgl = cs.viewGL;
      const V = vgl.camera.viewMatrix.array;
      const P = vgl.camera.projectionMatrix.array;
      const mul = (M, v) => [0, 1, 2, 3].map((r) => M[r] * v[0] + M[4 + r] * v[1] + M[8 + r] * v[2] + M[12 + r] * v[3]);
      const vp = vgl.viewport;
      return pts.map((d) => {
        const w = cs.dataToPoint(d);
        const c = mul(P, mul(V, [w[0], w[1], w[2], 1]));
        return [vp.x + ((c[0] / c[3] + 1) / 2) * vp.width, vp.y + ((1 - c[1] / c[3]) / 2) * vp.height];
      });
    },
    [name, points],
  );
}

/** The index of the point farthest (on the screen) from every other one among `candidates`. */
function loneliest(screen, candidates) {
  let best = candidates[0];
  let bestD = -1;
  for (const i of candidates) {
    let d = Infinity;
    for (let j = 0; j < screen.length; j++) if (j !== i) d = Math.min(d, Math.hypot(screen[i][0] - screen[j][0], screen[i][1] - screen[j][1]));
    if (d > bestD) {
      bestD = d;
      best = i;
    }
  }
  return best;
}

/** Scrolls a panel into view; the box of its chart `n` (0-based) on the page. */
async function chartBox(page, panel, n = 0) {
  await page.locator(`#panel-${panel}`).scrollIntoViewIfNeeded();
  await page.waitForTimeout(300);
  return page.locator(`#panel-${panel} .chart >> nth=${n}`).boundingBox();
}

/** A click as a person makes it: the mouse comes to rest on the place, then clicks (the 3-D
 * charts pick what is under the mouse as it moves). */
async function clickAt(page, x, y) {
  await page.mouse.move(x, y);
  await page.waitForTimeout(150);
  await page.mouse.click(x, y);
}

/** Waits until a thread is selected (`what` names the click in the failure). */
async function selected(page, what) {
  try {
    await page.waitForFunction(() => window.perfscape.store.get().thread !== null, null, { timeout: 5000 });
  } catch {
    assert.fail(`${what} selected nothing`);
  }
}

/** Clears the selected thread (and the event, unless `keepEvent`) and waits until the store has it. */
async function clear(page, keepEvent = false) {
  await page.evaluate((keep) => window.perfscape.store.set(keep ? { thread: null } : { event: null, thread: null }), keepEvent);
  await page.waitForFunction(() => window.perfscape.store.get().thread === null);
  await page.waitForTimeout(400);
}

describe('3-D views: a click selects what is drawn there (64 ranks)', () => {
  const s = servedForSuite(() => np64);

  for (const size of SIZES) {
    test(`terrain: a cell, a peak, and from above (${size.width}×${size.height})`, async () => {
      const { page, errors } = await open(s.br, s.server.url, size);
      // Ask again (the first answer came before we listened): another resolution.
      const answer = page.waitForResponse((r) => /\/api\/terrain\?/.test(r.url()));
      await page.evaluate(() => window.perfscape.store.set({ ty: window.perfscape.store.get().ty === 64 ? 128 : 64 }));
      const terrain = await (await answer).json();
      await page.waitForFunction((n) => window.perfscape.charts.get('terrain').getOption().series[0].data.length === n, terrain.grid.rows.length * terrain.grid.cols.length);
      await page.waitForTimeout(800);
      const g = terrain.grid;
      const nr = g.rows.length;
      const box = await chartBox(page, 'terrain');
      const tr = await option(page, 'terrain');
      // The thread axis and its control are named as the other views name them: ranks here.
      assert.equal(tr.xAxis3D[0].name, 'ranks');
      const txLabel = await page.$eval('#panel-terrain .tools select[data-key="tx"]', (sel) => sel.parentElement.firstChild.textContent);
      assert.equal(txLabel.trim(), 'X (ranks)');
      // Readable axes: names and labels at least 11 px, dark.
      for (const a of ['xAxis3D', 'zAxis3D']) {
        assert.ok(tr[a][0].nameTextStyle.fontSize >= 12, `${a} name size`);
        assert.ok((tr[a][0].axisLabel.fontSize ?? tr[a][0].axisLabel.textStyle.fontSize) >= 11, `${a} label size`);
      }
      // A cell at the front (a small event, never hidden by the larger ones behind it).
      const cells = tr.series[0].data;
      const front = cells.map((v, i) => [v, i]).filter(([v]) => v[1] === 1 && v[0] > 5 && v[0] < g.cols.length - 5).map(([, i]) => i);
      const pick = front[Math.floor(front.length / 2)];
      const [cell] = await project(page, 'terrain', [cells[pick]]);
      await clear(page);
      await clickAt(page, box.x + cell[0], box.y + cell[1]);
      await selected(page, `a click on cell ${cells[pick]} at ${cell}`);
      const row = g.rows[nr - 1 - cells[pick][1]];
      const col = g.cols[cells[pick][0]];
      assert.equal((await selection(page)).event, row.event, `event of row ${row.label}`);
      assert.equal((await selection(page)).thread, col.thread);
      // The largest peak: its event and thread.
      const peak = tr.series[1].data[0].value;
      const [pk] = await project(page, 'terrain', [peak]);
      await clear(page);
      await clickAt(page, box.x + pk[0], box.y + pk[1]);
      await selected(page, `a click on peak 1 at ${pk}`);
      assert.equal((await selection(page)).event, terrain.peaks[0].event);
      assert.equal((await selection(page)).thread, terrain.peaks[0].thread);
      // From above: every peak in sight, a cell deep inside (behind the ridges in 3-D) picks.
      await page.selectOption('#panel-terrain .tools select[data-key="tview"]', 'top');
      await page.waitForFunction(() => window.perfscape.charts.get('terrain').getOption().grid3D[0].viewControl.alpha === 90);
      await page.waitForTimeout(800);
      const peaks = (await option(page, 'terrain')).series[1].data.map((d) => d.value);
      const inner = cells.map((v, i) => [v, i]).filter(([v]) => v[1] === nr - 8 && v[0] === 20).map(([, i]) => i)[0];
      const [onTop, ...peakScreen] = await project(page, 'terrain', [cells[inner], ...peaks]);
      for (const p of peakScreen) assert.ok(p[0] > 0 && p[0] < box.width && p[1] > 0 && p[1] < box.height, 'every peak is in the picture');
      await clear(page);
      await clickAt(page, box.x + onTop[0], box.y + onTop[1]);
      await selected(page, `a click from above on cell ${cells[inner]} at ${onTop}`);
      assert.equal((await selection(page)).event, g.rows[nr - 1 - cells[inner][1]].event);
      assert.equal((await selection(page)).thread, g.cols[20].thread);
      await page.locator('#panel-terrain').screenshot({ path: path.join(process.env.VIEWS3D_SHOTS ?? '/tmp', `terrain-top-${size.width}.png`) });
      // 16 thread bins of 4 ranks each: a click on a bin selects the event and thread of its
      // height (the server's picks), not only the event.
      const coarse = page.waitForResponse((r) => /\/api\/terrain\?/.test(r.url()));
      await page.evaluate(() => window.perfscape.store.set({ tx: 16 }));
      const t16 = await (await coarse).json();
      assert.ok(t16.grid.cols.every((c) => c.last > c.first), 'every bin covers several ranks');
      await page.waitForFunction((n) => window.perfscape.charts.get('terrain').getOption().series[0].data.length === n, t16.grid.rows.length * t16.grid.cols.length);
      await page.waitForTimeout(800);
      const cells16 = (await option(page, 'terrain')).series[0].data;
      const nr16 = t16.grid.rows.length;
      const at = cells16.findIndex((v) => v[0] === 6 && v[1] === nr16 - 4);
      const [c16] = await project(page, 'terrain', [cells16[at]]);
      await clear(page);
      await clickAt(page, box.x + c16[0], box.y + c16[1]);
      await selected(page, `a click on bin ${cells16[at]} at ${c16}`);
      const want = t16.picks[(nr16 - 1 - cells16[at][1]) * t16.grid.cols.length + cells16[at][0]];
      assert.ok(want, 'the bin has a value');
      assert.equal((await selection(page)).event, want.event);
      assert.equal((await selection(page)).thread, want.thread);
      const th = Number(want.thread.split('.')[0]);
      const bin = t16.grid.cols[6];
      assert.ok(th >= bin.first && th <= bin.last, `rank ${th} lies in bin ${bin.first}–${bin.last}`);
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`point cloud: a click on a point selects its thread (${size.width}×${size.height})`, async () => {
      const { page, errors } = await open(s.br, s.server.url, size);
      const answer = page.waitForResponse((r) => /\/api\/pointcloud\?/.test(r.url()));
      await page.evaluate(() => window.perfscape.store.set({ event: null, thread: null }));
      const cloud = await (await answer).json();
      await page.waitForTimeout(1500);
      const box = await chartBox(page, 'pointcloud');
      const pc = await option(page, 'pointcloud');
      assert.ok(pc.xAxis3D[0].nameTextStyle.fontSize >= 12);
      assert.match(await page.textContent('#panel-pointcloud .event-title'), /x .*y .*z .*colour/);
      const pts = pc.series[0].data;
      assert.equal(pts.length, cloud.threads.length);
      const screen = await project(page, 'pointcloud', pts);
      const inside = screen.map((p, i) => [p, i]).filter(([p]) => p[0] > 40 && p[0] < box.width - 120 && p[1] > 20 && p[1] < box.height - 20).map(([, i]) => i);
      const i = loneliest(screen, inside);
      await clickAt(page, box.x + screen[i][0], box.y + screen[i][1]);
      await page.waitForFunction((t) => window.perfscape.store.get().thread === t, cloud.threads[i], { timeout: 5000 });
      // The selected thread's own (larger) point answers a click too.
      await page.waitForFunction(() => window.perfscape.charts.get('pointcloud').getOption().series.length === 2);
      const [again] = await project(page, 'pointcloud', [pts[i]]);
      await clickAt(page, box.x + again[0], box.y + again[1]);
      await page.waitForTimeout(500);
      assert.equal((await selection(page)).thread, cloud.threads[i]);
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`event view: a click selects the thread of the bar under the cursor (${size.width}×${size.height})`, async () => {
      const { page, errors } = await open(s.br, s.server.url, size);
      await clickBars(page, false);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});

/** Clicks three bars of the event view (the first, one in the middle, the last) at the pixel
 * nearest their centre; each selects the thread its bar stands for. */
async function clickBars(page, downsampled) {
  const box = await chartBox(page, 'event');
  const bars = await option(page, 'event-bars');
  const threads = bars.xAxis[0].data;
  assert.equal(threads.length, bars.series[0].data.length);
  assert.equal(/max of each rank bucket/.test(await page.textContent('#panel-event .event-title')), downsampled);
  const n = threads.length;
  const at = await page.evaluate(
    (idx) => {
      const c = window.perfscape.charts.get('event-bars');
      const px = idx.map((i) => c.convertToPixel({ xAxisIndex: 0 }, i));
      const y = c.convertToPixel({ yAxisIndex: 0 }, 0) - 20;
      return { px, band: (c.convertToPixel({ xAxisIndex: 0 }, idx[2]) - c.convertToPixel({ xAxisIndex: 0 }, idx[0])) / (idx[2] - idx[0]), y };
    },
    [0, Math.floor(n / 2), n - 1],
  );
  if (downsampled) assert.ok(at.band < 2, `bars are ${at.band} px wide`);
  // Bar i covers [left + i·band, left + (i + 1)·band]; the mouse gives whole pixels: take one
  // near the bar's middle that is not within a tenth of a band of an edge.
  const left = at.px[0] - at.band / 2;
  for (let k = 0; k < 3; k++) {
    let x = Math.round(at.px[k]);
    for (const dx of [0, 1, -1, 2, -2]) {
      const f = (Math.round(at.px[k]) + dx - left) / at.band;
      if (f - Math.floor(f) > 0.1 && f - Math.floor(f) < 0.9 && f > 0 && f < n) {
        x = Math.round(at.px[k]) + dx;
        break;
      }
    }
    const want = Math.floor((x - left) / at.band);
    await clear(page, true);
    await page.mouse.click(box.x + x, box.y + at.y);
    await selected(page, `a click on bar ${want} at x=${x} (centre ${at.px[k]}, band ${at.band})`);
    assert.equal((await selection(page)).thread, threads[want], `bar ${want} of ${n} at x=${x} (centre ${at.px[k]}, band ${at.band})`);
  }
}

describe('event view on 4,096 ranks', () => {
  const s = servedForSuite(() => bigRun(4096));
  for (const size of SIZES) {
    test(`sub-pixel bars: a click selects the thread under the cursor (${size.width}×${size.height})`, { timeout: 240000 }, async () => {
      const { page, errors } = await open(s.br, s.server.url, size);
      await page.waitForFunction(() => (window.perfscape.charts.get('event-bars')?.getOption()?.series?.[0]?.data?.length ?? 0) > 0, null, { timeout: 120000 });
      await clickBars(page, true);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});

describe('Kiviat tube (8-rank snapshot run)', () => {
  const s = servedForSuite(() => np8);
  for (const size of SIZES) {
    test(`a click on a tube's vertex selects its thread; the labels are readable (${size.width}×${size.height})`, async () => {
      const { page, errors } = await open(s.br, s.server.url, size);
      await page.evaluate(() => window.perfscape.store.set({ thread: null }));
      await settled(page);
      const box = await chartBox(page, 'kiviat');
      const kv = await option(page, 'kiviat');
      const labels = kv.series.find((s) => s.name === 'axes');
      assert.ok((labels.label.fontSize ?? labels.label.textStyle.fontSize) >= 12);
      const vertexSeries = kv.series.filter((s) => s.type === 'scatter3D' && / \(vertices\)$/.test(s.name));
      assert.ok(vertexSeries.length >= 2, `vertex series: ${vertexSeries.length}`);
      const all = vertexSeries.flatMap((s) => s.data.map((d) => ({ thread: s.name.split(' ')[0], d })));
      const screen = await project(page, 'kiviat', all.map((v) => v.d));
      const inside = screen.map((p, i) => [p, i]).filter(([p]) => p[0] > 20 && p[0] < box.width - 20 && p[1] > 20 && p[1] < box.height - 20).map(([, i]) => i);
      const i = loneliest(screen, inside);
      await clickAt(page, box.x + screen[i][0], box.y + screen[i][1]);
      await page.waitForFunction((t) => window.perfscape.store.get().thread === t, all[i].thread, { timeout: 5000 });
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});

/** The window the timeline shows (ns) and the time at chart pixel `x`. */
function timeAt(page, x) {
  return page.evaluate((px) => {
    const c = window.perfscape.charts.get('timeline');
    const dz = c.getOption().dataZoom[0];
    const grid = c.getModel().getComponent('grid', 1).coordinateSystem.getRect();
    return { t: c.convertFromPixel({ xAxisIndex: 1 }, px), a: dz.startValue, b: dz.endValue, plot: grid.width, left: grid.x };
  }, x);
}

/** Waits until the timeline drew an answer for its window [a, b] (the title says it). */
async function drawnWindow(page, before) {
  await page.waitForFunction(
    (b) => {
      const d = window.perfscape.charts.get('timeline-data');
      const t = document.querySelector('#panel-timeline .event-title')?.textContent ?? '';
      return d && (d.from_ns !== b.from || d.to_ns !== b.to) && !document.querySelector('#panel-timeline.loading') && t.includes('window');
    },
    before,
    { timeout: 10000 },
  );
  await page.waitForTimeout(300);
}

describe('timeline (np4 Chrome trace)', () => {
  const s = servedForSuite(() => trace);
  for (const size of SIZES) {
    test(`the wheel and W/S zoom about the cursor, A/D pan, labels fit their slices, the strip title's lines apart (${size.width}×${size.height})`, async () => {
      const { page, errors } = await open(s.br, s.server.url, size);
      const box = await chartBox(page, 'timeline');
      const y = box.height * 0.5;
      const data = () => page.evaluate(() => ({ from: window.perfscape.charts.get('timeline-data').from_ns, to: window.perfscape.charts.get('timeline-data').to_ns }));
      // Wheel steps in at three places and out at one: the time under the cursor stays there.
      const first = await timeAt(page, 0);
      for (const [share, dy] of [
        [0.9, -100],
        [0.3, -100],
        [0.55, -100],
        [0.7, 100],
      ]) {
        const x = first.left + first.plot * share;
        const was = await timeAt(page, x);
        const prev = await data();
        await page.mouse.move(box.x + x, box.y + y);
        await page.mouse.wheel(0, dy);
        await drawnWindow(page, prev);
        const now = await timeAt(page, x);
        const pixel = (now.b - now.a) / now.plot;
        assert.ok(Math.abs(now.t - was.t) <= pixel, `at ${share}: ${was.t} ns before, ${now.t} after (a pixel is ${pixel} ns)`);
        assert.ok(dy < 0 ? now.b - now.a < was.b - was.a : now.b - now.a > was.b - was.a, 'the window narrowed (in) or widened (out)');
      }
      // W zooms in about the mouse too; D pans later, A earlier.
      const x = first.left + first.plot * 0.4;
      await page.mouse.move(box.x + x, box.y + y);
      let was = await timeAt(page, x);
      let prev = await data();
      await page.keyboard.press('w');
      await drawnWindow(page, prev);
      let now = await timeAt(page, x);
      assert.ok(Math.abs(now.t - was.t) <= (now.b - now.a) / now.plot && now.b - now.a < was.b - was.a, 'W zooms in about the mouse');
      was = now;
      prev = await data();
      await page.keyboard.press('d');
      await drawnWindow(page, prev);
      now = await timeAt(page, x);
      assert.ok(now.a > was.a && Math.abs(now.b - now.a - (was.b - was.a)) < 1, 'D pans later');
      prev = await data();
      await page.keyboard.press('a');
      await drawnWindow(page, prev);
      assert.ok((await timeAt(page, x)).a < now.a, 'A pans earlier');
      // Back to the whole trace: labels on the wide slices, each fits its slice, none overlap.
      prev = await data();
      await page.evaluate(() => window.perfscape.charts.get('timeline').dispatchAction({ type: 'dataZoom', start: 0, end: 100 }));
      await drawnWindow(page, prev);
      for (const zoomed of [false, true]) {
        if (zoomed) {
          prev = await data();
          await page.mouse.move(box.x + first.left + first.plot * 0.88, box.y + y);
          for (let i = 0; i < 6; i++) await page.mouse.wheel(0, -100);
          await drawnWindow(page, prev);
        }
        const labels = await page.evaluate(() => {
          const c = window.perfscape.charts.get('timeline');
          const ctx = document.createElement('canvas').getContext('2d');
          const out = [];
          for (const el of c.getZr().storage.getDisplayList(true)) {
            const group = el.parent?.parent;
            if (el.type !== 'tspan' || !group || group.type !== 'group') continue;
            const rect = group.children().find((k) => k.type === 'rect');
            if (!rect) continue;
            ctx.font = el.style.font;
            const w = ctx.measureText(el.style.text).width;
            const x = el.style.textAlign === 'center' ? el.style.x - w / 2 : el.style.x;
            out.push({ text: el.style.text, x0: x, x1: x + w, y: rect.shape.y, s0: rect.shape.x, s1: rect.shape.x + rect.shape.width });
          }
          return out;
        });
        assert.ok(labels.length >= 8, `labels drawn: ${labels.length}`);
        assert.ok(labels.some((l) => l.text.endsWith('…')), 'some names cut with an ellipsis');
        for (const l of labels) assert.ok(l.x0 >= l.s0 - 0.5 && l.x1 <= l.s1 + 0.5, `"${l.text}" [${l.x0}, ${l.x1}] fits its slice [${l.s0}, ${l.s1}]`);
        for (const a of labels)
          for (const b of labels) if (a !== b && Math.abs(a.y - b.y) < 1) assert.ok(a.x1 <= b.x0 + 0.5 || b.x1 <= a.x0 + 0.5, `"${a.text}" and "${b.text}" overlap`);
      }
      // The strip title: two lines, one under the other, left of the strip's axis.
      const title = await page.evaluate(() => {
        const c = window.perfscape.charts.get('timeline');
        const lines = c
          .getZr()
          .storage.getDisplayList(true)
          .filter((el) => el.type === 'tspan' && /threads in|selected event/.test(el.style.text));
        return lines.map((l) => ({ text: l.style.text, y: l.style.y + (l.parent?.transform?.[5] ?? 0), size: parseFloat(/(\d+)px/.exec(l.style.font)[1]), right: (l.parent?.transform?.[4] ?? 0) + l.parent.getBoundingRect().width }));
      });
      assert.equal(title.length, 2);
      assert.ok(title[1].y - title[0].y >= title[0].size, `the lines are ${title[1].y - title[0].y} px apart`);
      assert.ok(title.every((l) => l.right < first.left - 12), 'left of the strip and its axis labels');
      await page.locator('#panel-timeline').screenshot({ path: path.join(process.env.VIEWS3D_SHOTS ?? '/tmp', `timeline-zoomed-${size.width}.png`) });
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});
