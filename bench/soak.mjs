// Load and soak test of `perfscape serve` (issue "hardening"): N concurrent clients on loopback
// for T seconds ask the view endpoints with varied parameters (kinds, reductions, thread orders,
// cluster counts, subsets, row kinds, regions, sizes), so that the server keeps meeting new
// parameter combinations, as a user clicking for an hour or a shared session of ten does.
// Prints requests, errors by status, p50/p99/max per endpoint and the server's peak RSS against
// its memory budget (`--cache-memory`). Bounded in count and time; stops by itself; only talks
// to 127.0.0.1.
//
// usage: node bench/soak.mjs --bin PERFSCAPE --run RUN_DIR [--clients 100] [--seconds 60]
//          [--cache-memory 1G] [--allowance 96M] [--max-requests 1000000] [--seed 1] [--json]
// Exit status: 0 when every request succeeded and the server's peak RSS stayed within the
// budget plus the allowance (default 0: the budget holds the loaded run, the cache, the answers
// being computed and the allocator's pages; API.md, "Memory"). 1 otherwise. The CI test runs a
// short version with a small budget and an allowance for a debug build's own pages:
// crates/perfscape-cli/tests/soak.rs.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';

function args() {
  const a = { clients: 100, seconds: 60, 'cache-memory': '1G', allowance: '0', 'max-requests': 1_000_000, seed: 1, json: false };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '');
    if (k === 'json') a.json = true;
    else a[k] = argv[++i];
  }
  if (!a.bin || !a.run) {
    console.error('usage: node bench/soak.mjs --bin PERFSCAPE --run RUN_DIR [--clients N] [--seconds T] [--cache-memory 1G] [--json]');
    process.exit(2);
  }
  for (const k of ['clients', 'seconds', 'max-requests', 'seed']) a[k] = Number(a[k]);
  return a;
}

/** Bytes of a size written as `--cache-memory` takes it (`512M`, `1G`, `65536`). */
function bytes(s) {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?$/i.exec(String(s).trim());
  if (!m) throw new Error(`size ${s}: expected e.g. 512M or 1G`);
  return Math.round(Number(m[1]) * 1024 ** ' KMGT'.indexOf((m[2] || ' ').toUpperCase()));
}

/** Deterministic pseudo-random numbers (mulberry32), so a run's requests can be repeated. */
function rng(seed) {
  let t = seed >>> 0;
  const next = () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let x = t;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), pick: (xs) => xs[Math.floor(next() * xs.length)] };
}

function serve(a) {
  return new Promise((resolve, reject) => {
    const child = spawn(a.bin, ['serve', a.run, '--no-open', '--no-cache', '--cache-memory', String(a['cache-memory'])], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`the server did not start in 300 s: ${out}${err}`)), 300_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/ at (http:\/\/127\.0\.0\.1:\d+)\/\?token=(\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ base: m[1], token: m[2], child, stderr: () => err });
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (c) => reject(new Error(`the server exited (${c}): ${out}${err}`)));
  });
}

/** VmRSS and VmHWM (peak) of a process, in bytes. */
function memory(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

function pct(xs, p) {
  if (!xs.length) return null;
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

/** One random request: [endpoint name, path with query]. */
function request(r, run) {
  const kind = r.pick(['exclusive', 'inclusive', 'calls', 'exclusive']);
  const metric = r.int(0, run.metrics - 1);
  const rows = run.lines && r.next() < 0.25 ? 'lines' : 'events';
  const callpaths = rows === 'events' && r.next() < 0.4;
  const axis = () => {
    const t = r.pick(['id', 'id', 'value', 'cluster']);
    const q = { threads: t };
    if (t === 'value') q.by_event = r.pick(run.events);
    if (t === 'cluster') q.clusters = r.int(2, 16);
    const subset = r.pick(t === 'cluster' ? ['all', 'top', 'reps'] : ['all', 'all', 'top']);
    q.subset = subset;
    if (subset === 'top') q.top = r.int(8, 512);
    return q;
  };
  const base = { metric, kind, rows, callpaths, order: r.pick(['rank', 'rank', 'name', 'file']), reduce: r.pick(['max', 'sum']) };
  const which = r.pick(['matrix', 'matrix', 'overview', 'event', 'calltree', 'events', 'terrain', 'threads']);
  let q;
  let path;
  switch (which) {
    case 'matrix': {
      const r0 = r.int(0, 20);
      const t0 = r.int(0, Math.max(0, run.threads - 2));
      q = { ...base, ...axis(), r0, r1: r0 + r.int(1, 60), t0, t1: t0 + r.int(1, run.threads), h: r.int(50, 600), w: r.int(100, 1600) };
      path = '/api/matrix';
      break;
    }
    case 'overview':
      q = { ...base, ...axis(), skip: r.int(1, 20), bin: r.int(1, 4), strips: r.int(1, 6), w: r.int(32, 800) };
      path = '/api/overview';
      break;
    case 'terrain':
      q = { metric, kind, rows, callpaths, ...axis(), h: r.int(20, 60), w: r.int(32, 128), peaks: r.int(1, 10) };
      path = '/api/terrain';
      break;
    case 'threads':
      q = { metric, kind, ...axis() };
      path = '/api/threads';
      break;
    case 'event':
      q = { metric, kind, bins: r.int(5, 100), points: r.int(16, 8192) };
      path = `/api/event/${r.pick(run.events)}`;
      break;
    case 'calltree':
      q = { metric, scope: r.pick(['total', 'mean', 'mean_all', r.pick(run.threadLabels)]) };
      path = '/api/calltree';
      break;
    default:
      q = { metric, kind, callpaths };
      path = '/api/events';
  }
  if (q.reduce === 'sum' && !run.sums[metric] && kind !== 'calls') q.reduce = 'max';
  const query = Object.entries(q)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');
  return [which, `${path}?${query}`];
}

async function main() {
  const a = args();
  const budget = bytes(a['cache-memory']);
  const allowance = bytes(a.allowance);
  const server = await serve(a);
  const headers = { Authorization: `Bearer ${server.token}` };
  const get = async (p) => {
    const res = await fetch(server.base + p, { headers });
    if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const info = await get('/api/run');
  const events = (await get('/api/events?callpaths=true')).rows.map((e) => e.id);
  const threadList = await get('/api/threads');
  const run = {
    metrics: info.metrics.length,
    sums: info.metrics.map((m) => m.combine === 'sum'),
    threads: info.threads,
    lines: info.sample_events > 0,
    events: events.slice(0, 2000),
    threadLabels: threadList.threads.slice(0, 1000),
  };
  const loaded = memory(server.child.pid);
  let peakRss = loaded.rss;
  // What the server says it keeps (GET /api/memory), at its largest.
  const kept = { held_bytes: 0, building_bytes: 0, waiting: 0, computing: 0, cache_budget_bytes: 0, loaded_bytes: 0 };
  const sampler = setInterval(() => {
    try {
      peakRss = Math.max(peakRss, memory(server.child.pid).rss);
    } catch {
      /* the server is gone: the requests say so */
    }
  }, 100);
  const asker = setInterval(() => {
    get('/api/memory')
      .then((m) => {
        for (const k of Object.keys(kept)) kept[k] = Math.max(kept[k], m[k]);
      })
      .catch(() => {});
  }, 250);

  // The clients' requests: node:http on kept-alive connections, asking for gzip as a browser
  // does and reading the (compressed) body through without decoding it. `fetch` would decode
  // every answer and took more than half a core of the 2 the server shares with the clients.
  const agent = new http.Agent({ keepAlive: true, maxSockets: a.clients });
  const ask = (p) =>
    new Promise((resolve, reject) => {
      const req = http.get(
        server.base + p,
        { agent, headers: { ...headers, 'Accept-Encoding': 'gzip, deflate, br, zstd' }, timeout: 120_000 },
        (res) => {
          res.on('data', () => {});
          res.on('end', () => {
            // How the server made the answer (compute.rs: `blocking`): a hit, a miss or a view
            // without cached stages, and the time it waited for a computation slot.
            const timing = /wait;dur=([\d.]+), compute;dur=([\d.]+)/.exec(res.headers['server-timing'] ?? '');
            resolve({
              status: res.statusCode,
              cache: res.headers['x-perfscape-cache'] ?? 'unknown',
              wait: timing ? Number(timing[1]) : null,
              compute: timing ? Number(timing[2]) : null,
            });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('no answer in 120 s')));
      req.on('error', reject);
    });
  const times = new Map();
  // Per endpoint and how the server made the answer (hit, miss, direct): latencies, and the
  // server's own wait for a slot and compute time.
  const split = new Map();
  // (start, ms) of every request, for the latencies per 10-second window (the first one is
  // the cold start: every cache empty).
  const all = [];
  const statuses = new Map();
  const failures = [];
  let sent = 0;
  const end = Date.now() + a.seconds * 1000;
  const client = async (i) => {
    const r = rng(a.seed * 7919 + i);
    while (Date.now() < end && sent < a['max-requests']) {
      sent++;
      const [name, p] = request(r, run);
      const t0 = performance.now();
      let status;
      let how = null;
      try {
        how = await ask(p);
        status = how.status;
        if (status !== 200 && failures.length < 10) failures.push(`${status} ${p}`);
      } catch (e) {
        status = 'network';
        if (failures.length < 10) failures.push(`${e.message} ${p}`);
      }
      const ms = performance.now() - t0;
      all.push([t0, ms]);
      if (!times.has(name)) times.set(name, []);
      times.get(name).push(ms);
      if (how) {
        const k = `${name} ${how.cache}`;
        if (!split.has(k)) split.set(k, { ms: [], wait: [], compute: [] });
        const e = split.get(k);
        e.ms.push(ms);
        if (how.wait !== null) {
          e.wait.push(how.wait);
          e.compute.push(how.compute);
        }
      }
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: a.clients }, (_, i) => client(i)));
  const wall = (performance.now() - started) / 1000;
  clearInterval(sampler);
  clearInterval(asker);
  const mem = memory(server.child.pid);
  peakRss = Math.max(peakRss, mem.rss, mem.hwm);
  const stats = await get('/api/run').catch(() => null);
  server.child.kill('SIGINT');

  const errors = [...statuses].filter(([s]) => s !== 200).reduce((n, [, c]) => n + c, 0);
  const endpoints = [...times].map(([name, xs]) => ({
    endpoint: name,
    requests: xs.length,
    p50_ms: pct(xs, 50),
    p99_ms: pct(xs, 99),
    max_ms: Math.max(...xs),
  }));
  const by_cache = [...split]
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([k, e]) => ({
      endpoint: k.split(' ')[0],
      cache: k.split(' ')[1],
      requests: e.ms.length,
      p50_ms: pct(e.ms, 50),
      p99_ms: pct(e.ms, 99),
      wait_p50_ms: pct(e.wait, 50),
      compute_p50_ms: pct(e.compute, 50),
      compute_p99_ms: pct(e.compute, 99),
      compute_total_s: e.compute.reduce((a, b) => a + b, 0) / 1000,
    }));
  const windows = [];
  for (const [t, ms] of all) {
    const k = Math.max(0, Math.floor((t - started) / 10_000));
    (windows[k] ??= []).push(ms);
  }
  const result = {
    run: a.run,
    clients: a.clients,
    seconds: Number(wall.toFixed(1)),
    requests: sent,
    errors,
    statuses: Object.fromEntries(statuses),
    failures,
    rss_after_load_bytes: loaded.rss,
    peak_rss_bytes: peakRss,
    budget_bytes: budget,
    // What the requests made the server keep: the growth of its RSS beyond the loaded run.
    growth_bytes: peakRss - loaded.rss,
    allowance_bytes: allowance,
    within_budget: peakRss <= budget,
    within_budget_and_allowance: peakRss <= budget + allowance,
    // The largest figures GET /api/memory gave during the run.
    server_kept_max: kept,
    load_average: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
    endpoints,
    by_cache,
    windows: windows.map((xs, k) => ({ from_s: 10 * k, requests: xs.length, p50_ms: pct(xs, 50), p99_ms: pct(xs, 99), max_ms: Math.max(...xs) })),
    server_ok: stats !== null,
  };
  if (a.json) {
    console.log(JSON.stringify(result));
  } else {
    const mb = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
    console.log(`${a.clients} clients × ${result.seconds} s on ${a.run}: ${sent} requests, ${errors} errors ${JSON.stringify(result.statuses)}`);
    console.log(`server RSS after load ${mb(loaded.rss)}, peak ${mb(peakRss)} (+${mb(result.growth_bytes)}), budget ${mb(budget)}: peak ${result.within_budget ? 'within' : 'OVER'} the budget${allowance ? `, ${result.within_budget_and_allowance ? 'within' : 'OVER'} it + the allowance of ${mb(allowance)}` : ''}; load average ${result.load_average}`);
    console.log(`the loaded run weighs ${mb(kept.loaded_bytes)}; of the cache's ${mb(kept.cache_budget_bytes)} it kept at most ${mb(kept.held_bytes)} (+${mb(kept.building_bytes)} being built); at most ${kept.computing} computing and ${kept.waiting} waiting`);
    console.log('| endpoint | requests | p50 ms | p99 ms | max ms |');
    console.log('|---|---|---|---|---|');
    for (const e of endpoints.sort((x, y) => x.endpoint.localeCompare(y.endpoint))) {
      console.log(`| ${e.endpoint} | ${e.requests} | ${e.p50_ms.toFixed(1)} | ${e.p99_ms.toFixed(1)} | ${e.max_ms.toFixed(1)} |`);
    }
    console.log('| endpoint | answer | requests | p50 ms | p99 ms | server: wait p50 | compute p50 | compute p99 | compute total s |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    const f = (x) => (x === null ? '-' : x.toFixed(1));
    for (const e of by_cache) {
      console.log(`| ${e.endpoint} | ${e.cache} | ${e.requests} | ${f(e.p50_ms)} | ${f(e.p99_ms)} | ${f(e.wait_p50_ms)} | ${f(e.compute_p50_ms)} | ${f(e.compute_p99_ms)} | ${e.compute_total_s.toFixed(1)} |`);
    }
    console.log(`every endpoint, per 10 s: ${result.windows.map((w) => `${w.from_s}s p50 ${w.p50_ms.toFixed(0)} p99 ${w.p99_ms.toFixed(0)}`).join(' · ')}`);
    for (const f of failures) console.log(`failed: ${f}`);
  }
  process.exit(errors === 0 && result.within_budget_and_allowance && result.server_ok ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
