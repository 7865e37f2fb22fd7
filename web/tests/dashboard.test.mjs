// Browser tests of dashboards (`perfscape serve RUN --dashboard FILE`): the example dashboards
// draw every panel at 1600×1000 and 1280×800; a broken dashboard shows each error in its
// panel's place (file:line) and still draws its good panel; a dashboard file edited while a
// replayed run is live is drawn again in place, without reloading the page, and the live trend
// keeps growing; a click on a bar selects its event. Run: `npm run test:browser`.

import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { allDrew, panels, settled } from './dashboard-helpers.mjs';
import { browser, drawn, open, repo, selection, serve, shared } from './harness.mjs';

const examples = path.join(repo, 'examples/dashboards');
const np64 = path.join(repo, 'examples/tau/mpi-stencil-np64-callpath-commmatrix');
const np8 = path.join(shared, 'corpus/tau-real/mpi-stencil-np8-snapshot');
const np128 = path.join(shared, 'corpus/tau-real/mpi-stencil-np128-callpath-multimetric');
const SIZES = [
  { width: 1600, height: 1000 },
  { width: 1280, height: 800 },
];

describe('dashboards', () => {
  let br;
  let dir;
  before(async () => {
    br = await browser();
    dir = mkdtempSync(path.join(tmpdir(), 'perfscape-dash-'));
  });
  after(async () => {
    await br?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const cases = [
    { name: 'mpi', run: np64, extra: [], panels: 6 },
    { name: 'online', run: np8, extra: [], panels: 6 },
    { name: 'derived', run: np128, extra: ['--derive', 'CPU share = CPU_TIME / TIME'], panels: 4 },
  ];
  for (const c of cases) {
    test(`the example ${c.name}.toml draws every panel at both sizes`, async () => {
      const server = await serve(c.run, [...c.extra, '--dashboard', path.join(examples, `${c.name}.toml`)]);
      try {
        for (const vp of SIZES) {
          const { page, errors } = await open(br, `${server.url}?dashboard=0`, vp);
          await settled(page);
          const list = await panels(page);
          assert.equal(list.length, c.panels, list.map((p) => p.title).join(' | '));
          allDrew(list, `${c.name} ${vp.width}×${vp.height}`);
          // The panels fit the page's width (no horizontal overflow).
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          assert.ok(overflow <= 0, `horizontal overflow ${overflow}px`);
          assert.deepEqual(errors, []);
          await page.close();
        }
      } finally {
        server.stop();
      }
    });
  }

  test('the header chooses between the built-in views and the dashboards; a click on a bar selects its event', async () => {
    const server = await serve(np64, ['--dashboard', path.join(examples, 'mpi.toml'), '--dashboard', path.join(examples, 'derived.toml')]);
    try {
      const { page, errors } = await open(br, server.url);
      // Built-in views first; the choice lists both dashboards by title.
      assert.ok(await page.isVisible('main.dash.layout #panel-ranked'));
      const options = await page.$$eval('select[data-key="dashboard"] option', (os) => os.map((o) => [o.value, o.textContent]));
      assert.deepEqual(options, [
        ['', 'Built-in views'],
        ['0', 'MPI breakdown'],
        ['1', 'Derived metric: CPU share = CPU_TIME / TIME'],
      ]);
      await page.selectOption('select[data-key="dashboard"]', '0');
      await settled(page);
      assert.match(page.url(), /dashboard=0/);
      assert.equal(await page.$('main.dash.layout'), null, 'the built-in layout is gone');
      assert.equal(await page.evaluate(() => window.perfscape.views.has('ranked')), false, 'its views are disposed');
      // Click the bar of a routine other than the selected event.
      const target = await page.evaluate(() => {
        const c = window.perfscape.charts.get('dasha');
        const o = c.getOption();
        const cats = o.yAxis[0].data;
        const cur = window.perfscape.store.get().event;
        const i = cats.findIndex((name) => name === 'MPI_Waitall()');
        const px = c.convertToPixel({ xAxisIndex: 0, yAxisIndex: 0 }, [o.series[0].data[i] / 2, i]);
        return { px, cur };
      });
      const box = await page.locator('#panel-dasha .chart').boundingBox();
      await page.mouse.click(box.x + target.px[0], box.y + target.px[1]);
      const events = (await page.evaluate(() => fetch('/api/events').then((r) => r.json()))).rows;
      const waitall = events.find((e) => e.name === 'MPI_Waitall()').id;
      assert.notEqual(target.cur, waitall);
      await page.waitForFunction((id) => window.perfscape.store.get().event === id, waitall, { timeout: 5000 });
      assert.match(await page.textContent('#selection'), /MPI_Waitall/);
      // A dashboard panel maximizes (its id is a valid `focus`), also from the URL.
      await page.click('#panel-dashe button.max');
      await page.waitForFunction(() => /focus=dashe/.test(window.location.search));
      assert.equal(await page.isVisible('#panel-dasha'), false);
      const again = await open(br, page.url());
      await settled(again.page);
      assert.equal((await selection(again.page)).focus, 'dashe');
      const h = await again.page.$eval('#panel-dashe', (e) => e.getBoundingClientRect().height);
      assert.ok(h > 800, `the maximized panel is ${h}px high`);
      assert.deepEqual(again.errors, []);
      await again.page.close();
      await page.click('#panel-dashe button.max');
      await page.waitForFunction(() => !/focus=/.test(window.location.search));
      // The other dashboard, then the built-in views again.
      await page.selectOption('select[data-key="dashboard"]', '1');
      await settled(page);
      // np64 has no CPU_TIME: the dashboard's derived metric says so in its own place first.
      const derivedPanels = await panels(page);
      assert.equal(derivedPanels.length, 5);
      assert.match(derivedPanels[0].error, /derived\.toml:\d+:\d+: not computed for this run: derived metric `CPU share`.*no metric `CPU_TIME`/);
      await page.selectOption('select[data-key="dashboard"]', '');
      await page.waitForSelector('main.dash.layout #panel-ranked tbody tr');
      assert.equal(await page.$$eval('main.dash', (m) => m.length), 1, 'one grid: the layout');
      assert.doesNotMatch(page.url(), /dashboard=/);
      assert.equal((await selection(page)).event, waitall, 'the selection stays');
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      server.stop();
    }
  });

  test('a broken dashboard shows each error in its place, file and line, and draws its good panel', async () => {
    const bad = path.join(dir, 'bad.toml');
    // ../../etc/passwd: outside the dashboard's directory (the temporary one) and readable.
    writeFileSync(
      bad,
      `title = "Broken on purpose"
columns = 2
include = ["../../etc/passwd"]

[[panel]]
title = "good"
component = "bars"
sql = "SELECT e.event, e.name, SUM(v.exclusive) AS us FROM event_values v JOIN events e USING (run, event) WHERE v.run = 0 AND v.metric = 0 AND NOT e.is_callpath GROUP BY e.event, e.name ORDER BY us DESC LIMIT 5"
x = "name"
y = ["us"]

[[panel]]
title = "wrong sql"
component = "table"
sql = "SELECT no_such_column FROM events"

[[panel]]
title = "unknown component"
component = "sparkline"
sql = "SELECT 1 AS x"

[[panel]]
title = "wrong type"
component = "table"
sql = "SELECT 1 AS x"
height = "tall"

[[panel]]
title = "empty"
component = "bars"
sql = "SELECT 'a' AS name, 1 AS v WHERE false"
x = "name"
y = ["v"]
`,
    );
    // A file that is not TOML: its error in place of the whole dashboard.
    const syntax = path.join(dir, 'syntax.toml');
    writeFileSync(syntax, 'title = "Not TOML"\ncolumns = 2\n[[panel]\ntitle = "x"\n');
    const server = await serve(np64, ['--dashboard', bad, '--dashboard', syntax]);
    try {
      for (const vp of SIZES) {
        const { page, errors } = await open(br, `${server.url}?dashboard=0`, vp);
        await settled(page);
        const list = await panels(page);
        assert.equal(list.length, 6, list.map((p) => p.title).join(' | '));
        const [include, good, sql, comp, type, empty] = list;
        const file = bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        // Each error in its place: file:line:column and what is wrong.
        assert.match(include.error, new RegExp(`^${file}:3:\\d+: .*outside`), include.error);
        assert.match(comp.error, new RegExp(`^${file}:19:\\d+: .*sparkline`), comp.error);
        assert.match(type.error, new RegExp(`^${file}:26:\\d+: .*height`), type.error);
        // The query's error (from the server, when it runs): the panel's file and line.
        assert.match(sql.error, new RegExp(`^${file}:12: the query failed: .*no_such_column`, 's'), sql.error);
        assert.equal(sql.title, 'wrong sql');
        // The good panel drew.
        assert.equal(good.title, 'good');
        assert.equal(good.error, null);
        assert.ok(good.ink > 0.02, `the good panel drew: ${good.ink}`);
        // An empty answer says so (never a blank panel).
        assert.equal(empty.error, null);
        assert.match(empty.empty, /^no rows/);
        // Errors are red and monospace, inside their panel.
        for (const p of [include, comp, type]) {
          const [color, font] = await page.$eval(`#${p.id} .spec-error`, (e) => [getComputedStyle(e).color, getComputedStyle(e).fontFamily]);
          assert.equal(color, 'rgb(185, 28, 28)');
          assert.match(font, /mono/);
        }
        const fits = await page.$$eval('main.dash .spec-error, main.dash .panel-error:not([hidden])', (els) =>
          els.every((e) => {
            const panel = e.closest('.panel').getBoundingClientRect();
            const r = e.getBoundingClientRect();
            return r.left >= panel.left && r.right <= panel.right + 1 && e.scrollWidth <= e.clientWidth + 1;
          }),
        );
        assert.ok(fits, 'every error fits in its panel');
        // The only console messages: the failed query's answer.
        assert.deepEqual(errors.filter((e) => !/no_such_column|status of 400/.test(e)), []);
        await page.close();
      }
      const { page, errors } = await open(br, `${server.url}?dashboard=1`);
      await page.waitForSelector('main.dash .dash-error');
      const text = await page.textContent('main.dash .dash-error');
      assert.match(text, new RegExp(`^${syntax.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:\\d+: `), text);
      assert.equal(await page.$$eval('main.dash > .panel', (e) => e.length), 0);
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      server.stop();
    }
  });

  test('an edited dashboard is drawn again in place while the replayed run stays live', { timeout: 90000 }, async () => {
    const live = path.join(dir, 'live.toml');
    writeFileSync(
      live,
      `title = "Live"
columns = 2

[[panel]]
view = "trend"
span = 2
height = 300
`,
    );
    // The run's 21 samples span about 1.4 s: at 0.05 of its pace they arrive over ~28 s.
    const server = await serve(np8, ['--replay', '--speed', '0.05', '--dashboard', live]);
    try {
      const page = await br.newPage({ viewport: { width: 1600, height: 1000 } });
      const errors = [];
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`${server.url}${server.url.includes('?') ? '&' : '?'}dashboard=0`);
      await page.waitForSelector('body[data-ready="1"]', { timeout: 60000 });
      const points = () => page.evaluate(() => window.perfscape.charts.get('trend')?.getOption().xAxis?.[0]?.data?.length ?? 0);
      await page.waitForFunction(() => (window.perfscape.charts.get('trend')?.getOption().xAxis?.[0]?.data?.length ?? 0) >= 2, null, { timeout: 30000 });
      await page.evaluate(() => {
        window.notReloaded = true;
        window.trendBefore = window.perfscape.views.get('trend');
      });
      const before = await points();
      assert.ok(before < 21, `the replay is still under way: ${before} samples`);
      const t0 = Date.now();
      appendFileSync(
        live,
        `
[[panel]]
title = "Samples so far"
component = "lines"
sql = "SELECT sample, COUNT(*) AS rows_per_sample FROM samples GROUP BY sample ORDER BY sample"
x = "sample"
y = ["rows_per_sample"]
`,
      );
      await page.waitForSelector('#panel-dashb .sql-info:not(:empty)', { timeout: 5000 });
      const took = Date.now() - t0;
      assert.ok(took < 3000, `the new panel appeared ${took} ms after the file changed`);
      assert.equal(await page.evaluate(() => window.notReloaded), true, 'the page was not reloaded');
      assert.equal(await page.evaluate(() => window.perfscape.views.get('trend') === window.trendBefore), true, 'the trend kept its view');
      assert.equal(await page.textContent('#panel-dashb h2'), 'Samples so far');
      // The trend keeps growing with the samples that arrive afterwards.
      const atEdit = await points();
      await page.waitForFunction((n) => (window.perfscape.charts.get('trend').getOption().xAxis[0].data.length ?? 0) > n, atEdit, { timeout: 15000 });
      assert.match(await page.textContent('#samplebar'), /live/);
      assert.deepEqual(errors, []);
      await page.close();
    } finally {
      server.stop();
    }
  });
});
