// Browser tests of issue 18, points 4 and 5 and the heat map's part of 3: colours that do not
// mislead (the heat map's colour range of the window or of the whole run, said in the panel; a
// legend with values in the metric's unit; a log scale; blank cells explained), the overview's
// rectangle exactly on the heat map's region (np64, and source lines of a 4,096-rank run with
// skipped rows, bins and strips), and heat-map row labels that do not overlap.
// At 1600×1000 and 1280×800. PERFSCAPE_SHOTS=DIR keeps screenshots to look at.

import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { bigRun, open, option, repo, servedForSuite, settled } from './harness.mjs';

const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');
const SIZES = [
  { width: 1600, height: 1000 },
  { width: 1280, height: 800 },
];
const UNIT = /\d(\.\d+)? (s|ms|µs|ns)\b/;

async function shot(page, name) {
  const dir = process.env.PERFSCAPE_SHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`) });
}

/** Sets state keys and waits until the views have drawn their new answers. */
async function set(page, patch) {
  await page.evaluate((p) => window.perfscape.store.set(p), patch);
  await settled(page);
}

/** The heat map's legend: heading and value labels (graphic texts). */
async function legend(page, chart = 'heatmap') {
  const o = await option(page, chart);
  const els = (o.graphic?.[0]?.elements ?? []).filter((e) => e.type === 'text');
  const by = (n) => els.filter((e) => e.name === n).map((e) => e.style.text);
  return { heading: by('legend-heading'), labels: by('legend-label'), blank: by('legend-blank-text').join(' ') };
}

/** The y positions of the heat map's row labels as drawn (right-aligned texts), top to bottom. */
async function rowLabelTops(page) {
  return page.evaluate(() => {
    const c = window.perfscape.charts.get('heatmap');
    const out = [];
    c.getZr().storage.getDisplayList(true).forEach((el) => {
      if (el.type === 'tspan' && el.style?.textAlign === 'right' && el.style?.text && !el.ignore && !el.invisible) {
        const r = el.getBoundingRect().clone();
        const m = el.getComputedTransform();
        if (m) r.applyTransform(m);
        out.push({ y: r.y, h: r.height });
      }
    });
    return out.sort((a, b) => a.y - b.y);
  });
}

async function checkRowLabels(page, minRows) {
  const hm = await option(page, 'heatmap');
  const rows = hm.yAxis[0].data;
  assert.ok(rows.length > minRows, `${rows.length} rows`);
  const box = await page.locator('#panel-heatmap .chart').boundingBox();
  const gridH = box.height - hm.grid[0].top - hm.grid[0].bottom;
  const shown = Math.ceil(rows.length / (hm.yAxis[0].axisLabel.interval + 1));
  assert.ok(shown * 11 <= gridH, `${shown} labels on ${gridH} px`);
  const tops = await rowLabelTops(page);
  assert.ok(tops.length >= Math.min(rows.length, 5) && tops.length <= shown, `${tops.length} labels drawn`);
  for (let k = 1; k < tops.length; k++) assert.ok(tops[k].y >= tops[k - 1].y + tops[k - 1].h - 0.5, `labels overlap at ${tops[k - 1].y} and ${tops[k].y}`);
  return rows;
}

const status = (page) => page.textContent('#panel-heatmap .status');

/** Records the last answer of `/api/<name>` the page received. */
function recorder(page, name) {
  const last = { value: null };
  page.on('response', async (r) => {
    if (new URL(r.url()).pathname === `/api/${name}` && r.ok()) {
      try {
        last.value = await r.json();
      } catch {
        /* aborted */
      }
    }
  });
  return last;
}

/** Checks the overview's region rectangles against the heat map's region: in every strip holding
 * some of its rows, the rectangle's edges fall on the overview bands of rows r0 and r1 − 1 and
 * of threads t0 and t1 − 1 (at their share of a bin), bands measured by ECharts itself. */
async function checkRectangle(page, ov, hm) {
  const region = { r0: hm.rows[0].first, r1: hm.rows.at(-1).last + 1, t0: hm.cols[0].first, t1: hm.cols.at(-1).last + 1 };
  const o = await option(page, 'overview');
  const rects = (o.graphic?.[0]?.elements ?? []).filter((e) => e.name === 'region');
  const at = (bins, p) => {
    for (let k = 0; k < bins.length; k++) {
      const b = bins[k];
      if (p <= b.first) return k;
      if (p <= b.last + 1) return k + (p - b.first) / (b.last - b.first + 1);
    }
    return bins.length;
  };
  const strips = ov.strips.map((s, i) => ({ s, i })).filter(({ s }) => s.some((row) => row.last >= region.r0 && row.first < region.r1));
  assert.ok(strips.length >= 1, 'the region is in some strip');
  assert.equal(rects.length, strips.length, `one rectangle per strip holding the region (${JSON.stringify(region)})`);
  for (const { s, i } of strips) {
    const rect = rects.find((r) => r.info.strip === i);
    assert.ok(rect, `rectangle in strip ${i}`);
    assert.deepEqual({ r0: rect.info.r0, r1: rect.info.r1, t0: rect.info.t0, t1: rect.info.t1 }, region);
    // Band edges from ECharts: centres of bands 0 and 1 (or the grid when there is one band).
    const px = await page.evaluate(({ i, nr, nc }) => {
      const c = window.perfscape.charts.get('overview');
      const p00 = c.convertToPixel({ seriesIndex: i }, [0, 0]);
      const p11 = c.convertToPixel({ seriesIndex: i }, [Math.min(1, nc - 1), Math.min(1, nr - 1)]);
      const rect = c.getModel().getComponent('grid', i).coordinateSystem.getRect();
      return { p00, p11, rect: { x: rect.x, y: rect.y, width: rect.width, height: rect.height } };
    }, { i, nr: s.length, nc: ov.cols.length });
    const bw = ov.cols.length > 1 ? px.p11[0] - px.p00[0] : px.rect.width;
    const bh = s.length > 1 ? px.p11[1] - px.p00[1] : px.rect.height;
    const x0 = px.p00[0] - bw / 2;
    const y0 = px.p00[1] - bh / 2;
    const want = {
      x: x0 + at(ov.cols, region.t0) * bw,
      y: y0 + at(s, region.r0) * bh,
      right: x0 + at(ov.cols, region.t1) * bw,
      bottom: y0 + at(s, region.r1) * bh,
    };
    const got = rect.shape;
    const near = (a, b) => Math.abs(a - b) <= 1;
    assert.ok(near(got.x, want.x) && near(got.y, want.y), `strip ${i}: corner ${got.x},${got.y} vs ${want.x},${want.y}`);
    assert.ok(near(got.x + got.width, want.right) || (want.right - want.x < 2 && near(got.width, 2)), `strip ${i}: right ${got.x + got.width} vs ${want.right}`);
    assert.ok(near(got.y + got.height, want.bottom) || (want.bottom - want.y < 2 && near(got.height, 2)), `strip ${i}: bottom ${got.y + got.height} vs ${want.bottom}`);
    // Inside the strip's grid.
    assert.ok(got.x >= px.rect.x - 1 && got.x + got.width <= px.rect.x + px.rect.width + 1);
    assert.ok(got.y >= px.rect.y - 1 && got.y + got.height <= px.rect.y + px.rect.height + 1);
  }
  return rects;
}

describe('64-rank run: colour range, legend, log scale, overview rectangle, row labels', () => {
  const s = servedForSuite(() => np64);

  for (const size of SIZES) {
    const tag = `${size.width}x${size.height}`;

    test(`whole run keeps the colour range when zooming, this window rescales (${tag})`, async () => {
      const { page, errors } = await open(s.br, `${s.server.url}?norm=global`, size);
      const full = (await option(page, 'heatmap')).visualMap[0];
      assert.match(await status(page), /^colour 0( µs)? – \S+ (s|ms|µs) \(this window\)/);
      // Whole run, un-zoomed: the same range.
      await page.selectOption('#panel-heatmap select[data-key="crange"]', 'run');
      await settled(page);
      const wholeFull = (await option(page, 'heatmap')).visualMap[0];
      assert.deepEqual([wholeFull.min, wholeFull.max], [full.min, full.max]);
      assert.match(await status(page), /\(whole run\)/);
      assert.deepEqual((await legend(page)).heading, ['whole run', 'linear']);
      // Zoom into a small region: the whole run's range stays.
      await set(page, { r0: 10, r1: 14, t0: 20, t1: 28 });
      const hm = await option(page, 'heatmap');
      assert.equal(hm.yAxis[0].data.length, 4);
      assert.deepEqual([hm.visualMap[0].min, hm.visualMap[0].max], [full.min, full.max]);
      const zoomedMax = Math.max(...hm.series[0].data.map((c) => c[3]));
      assert.ok(zoomedMax < full.max / 2, `${zoomedMax} vs ${full.max}`);
      assert.match(await status(page), /\(whole run\)/);
      await shot(page, `np64-zoom-wholerun-${tag}`);
      // This window: the range follows the window.
      await page.selectOption('#panel-heatmap select[data-key="crange"]', 'window');
      await settled(page);
      const win = (await option(page, 'heatmap')).visualMap[0];
      assert.equal(win.max, zoomedMax);
      assert.notEqual(win.max, full.max);
      assert.match(await status(page), /\(this window\)/);
      assert.deepEqual((await legend(page)).heading, ['this window', 'linear']);
      await shot(page, `np64-zoom-window-${tag}`);
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`per event: rows over their whole-run max, the legend in the selected event's unit (${tag})`, async () => {
      const { page, errors } = await open(s.br, `${s.server.url}?r0=0&r1=6&t0=0&t1=4`, size);
      // The top event is selected (in view): the legend gives its values.
      let lg = await legend(page);
      assert.deepEqual(lg.heading, ['per event', 'this window', 'MPI_Init()']);
      assert.ok(lg.labels.length >= 3 && lg.labels.every((t) => UNIT.test(t)), lg.labels.join('|'));
      // Nothing selected: shares of each row's max.
      await set(page, { event: null });
      // This window: every row reaches 1 (its own max in the window).
      let hm = await option(page, 'heatmap');
      const rowTop = (data) => {
        const m = new Map();
        for (const c of data) m.set(c[1], Math.max(m.get(c[1]) ?? 0, c[2]));
        return [...m.values()];
      };
      assert.ok(rowTop(hm.series[0].data).every((v) => v === 1));
      lg = await legend(page);
      assert.deepEqual(lg.heading, ['per event', 'this window']);
      assert.ok(lg.labels.includes('row max') && lg.labels.includes('0'), lg.labels.join('|'));
      assert.match(await status(page), /colour per event \(this window\): each row 0 – its max/);
      assert.match(lg.blank, /blank: event absent on that thread/);
      // Whole run: a row whose max lies outside threads 0–3 stays below 1.
      await page.selectOption('#panel-heatmap select[data-key="crange"]', 'run');
      await settled(page);
      hm = await option(page, 'heatmap');
      assert.ok(rowTop(hm.series[0].data).some((v) => v < 0.99), JSON.stringify(rowTop(hm.series[0].data)));
      // An event selected: the legend gives its values in its unit.
      const row = hm.yAxis[0].data[0];
      await page.click(`#panel-ranked tbody tr:has-text("${row}")`);
      await settled(page);
      lg = await legend(page);
      assert.deepEqual(lg.heading, ['per event', 'whole run', row]);
      assert.ok(lg.labels.length >= 3 && lg.labels.every((t) => UNIT.test(t)), lg.labels.join('|'));
      assert.match(await status(page), new RegExp(`colour per event \\(whole run\\): each row 0 – its max; .*: 0 – \\S+ (s|ms|µs)`));
      await shot(page, `np64-perevent-${tag}`);
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`the legend's values carry units; the log scale maps log10 and labels real values (${tag})`, async () => {
      const { page, errors } = await open(s.br, `${s.server.url}?norm=global`, size);
      let lg = await legend(page);
      assert.ok(lg.labels.length >= 4, `ends and ticks: ${lg.labels.join('|')}`);
      assert.ok(lg.labels.every((t) => UNIT.test(t)), lg.labels.join('|'));
      await page.selectOption('#panel-heatmap select[data-key="cscale"]', 'log');
      await settled(page);
      const hm = await option(page, 'heatmap');
      const vm = hm.visualMap[0];
      const cells = hm.series[0].data;
      const max = Math.max(...cells.map((c) => c[3]));
      assert.ok(Math.abs(vm.max - Math.log10(max)) < 1e-9, `visualMap max ${vm.max} = log10 ${max}`);
      const floor = 10 ** vm.min;
      assert.ok(floor > 0 && floor < max);
      for (const c of cells) assert.ok(Math.abs(c[2] - Math.log10(Math.max(c[3], floor))) < 1e-9, JSON.stringify(c));
      // Cells of 0 (if any) take the floor, blank cells have no datum.
      assert.ok(cells.every((c) => c[2] >= vm.min - 1e-9));
      lg = await legend(page);
      assert.deepEqual(lg.heading, ['this window', 'log scale']);
      assert.ok(lg.labels.length >= 3 && lg.labels.every((t) => UNIT.test(t)), lg.labels.join('|'));
      assert.ok(!lg.labels.some((t) => /^-?\d+(\.\d+)?$/.test(t)), 'no bare logs');
      assert.match(await status(page), /\(this window, log\)/);
      await shot(page, `np64-log-${tag}`);
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`the overview's rectangle is the heat map's region, with row labels and a legend (${tag})`, async () => {
      const { page, errors } = await open(s.br, `${s.server.url}`, size);
      const ovAns = recorder(page, 'overview');
      const hmAns = recorder(page, 'matrix');
      // The answers of the first draw: ask again (a metric change redraws both).
      await set(page, { kind: 'inclusive' });
      assert.ok(ovAns.value && hmAns.value);
      await checkRectangle(page, ovAns.value, hmAns.value);
      await set(page, { r0: 3, r1: 9, t0: 16, t1: 40 });
      const rects = await checkRectangle(page, ovAns.value, hmAns.value);
      assert.equal(rects.length, 1);
      const o = await option(page, 'overview');
      const texts = (o.graphic[0].elements ?? []).filter((e) => e.type === 'text').map((e) => e.style.text);
      assert.ok(texts.some((t) => /^rows 0–\d+/.test(t)), texts.join('|'));
      assert.ok(texts.some((t) => UNIT.test(t)), `legend with values: ${texts.join('|')}`);
      assert.ok(texts.includes('blank: no value'));
      // Row labels at the strip's left where they fit, else its first row's above it.
      assert.equal(o.yAxis[0].data.length, 18);
      const stripW = (await page.locator('#panel-overview .chart').boundingBox()).width;
      if (stripW >= 260) assert.ok(o.yAxis[0].show && o.yAxis[0].axisLabel.show, `row labels on ${stripW} px`);
      else assert.ok(texts.some((t) => /^rows 0–17: \.TAU application$/.test(t)), texts.join('|'));
      assert.match(await page.textContent('#panel-overview .status'), /outline: the heat map's rows 3–8 × threads 16–39/);
      await shot(page, `np64-overview-${tag}`);
      assert.deepEqual(errors, []);
      await page.close();
    });

    test(`heat-map row labels do not overlap; long callpaths keep their leaf (${tag})`, async () => {
      const { page, errors } = await open(s.br, `${s.server.url}?callpaths=1`, size);
      await checkRowLabels(page, 30);
      // Callpaths elided from the start: the leaf is kept, the full name in the tooltip.
      const fmt = await page.evaluate(() => {
        const c = window.perfscape.charts.get('heatmap');
        const f = c.getOption().yAxis[0].axisLabel.formatter;
        return c.getOption().yAxis[0].data.filter((l) => l.length > 40).map((l) => [l, f(l)]);
      });
      assert.ok(fmt.length > 0);
      for (const [full, short] of fmt) {
        assert.ok(short.startsWith('…') && full.endsWith(short.slice(1)) && short.length <= 36, short);
      }
      await shot(page, `np64-callpaths-${tag}`);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});

describe('4,096-rank run, source lines: the overview rectangle with skipped rows, bins and strips', () => {
  const s = servedForSuite(() => bigRun(4096));

  for (const size of SIZES) {
    const tag = `${size.width}x${size.height}`;
    test(`the rectangle marks the heat map's rows and threads in every strip (${tag})`, async () => {
      const { page, errors } = await open(s.br, `${s.server.url}?rows=lines&skip=20&bin=4`, size);
      const ovAns = recorder(page, 'overview');
      const hmAns = recorder(page, 'matrix');
      await set(page, { strips: 3 });
      await set(page, { r0: 0 });
      assert.ok(ovAns.value && hmAns.value);
      assert.equal(ovAns.value.strips.length, 3);
      assert.ok(ovAns.value.skipped_rows > 1000);
      // The whole run: a rectangle in every strip.
      assert.equal((await checkRectangle(page, ovAns.value, hmAns.value)).length, 3);
      // A region across two strips, starting inside a bin, and a thread range of bins.
      const strip1 = ovAns.value.strips[1];
      const r0 = ovAns.value.strips[0].at(-1).last - 1;
      const t = ovAns.value.cols;
      await set(page, { r0, r1: strip1[3].last - 1, t0: t[2].first + 1, t1: t[10].last });
      const rects = await checkRectangle(page, ovAns.value, hmAns.value);
      assert.equal(rects.length, 2);
      await shot(page, `np4096-lines-${tag}`);
      // Hundreds of rows: the heat map's labels fit its axis without overlapping.
      await set(page, { r0: null, r1: null, t0: null, t1: null });
      await checkRowLabels(page, 60);
      await shot(page, `np4096-lines-all-${tag}`);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});
