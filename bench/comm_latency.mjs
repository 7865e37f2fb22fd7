// `GET /api/comm` latency: `node bench/comm_latency.mjs URL_WITH_TOKEN [N]` against `perfscape serve` of a
// tau_scale.py run (H, W = bins asked for; default 300 x 500). Requests alternate statistics, max/sum,
// the whole matrix and random zoomed regions. BENCHMARKS.md, "Communication matrix".
// Usage: node bench.mjs URL(with token) N
const [url, n] = [process.argv[2], Number(process.argv[3] ?? 200)];
const [head, q] = url.split('?');
const base = head.replace(/\/$/, '');
const tok = q ? `&${q}` : '';
const stats = ['bytes', 'calls', 'mean_bytes', 'max_bytes'];
// warm: the matrix is built once and cached
let t = performance.now();
let r = await fetch(`${base}/api/comm?h=256&w=256${tok}`);
console.log('first request (builds the matrix):', (performance.now() - t).toFixed(1), 'ms', r.status);
const times = [];
let seed = 1;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
for (let i = 0; i < n; i++) {
  const a = Math.floor(rnd() * 4000), size = 1 + Math.floor(rnd() * 4096);
  const b = Math.floor(rnd() * 4000);
  const zoom = i % 2 ? `&r0=${a}&r1=${a + size}&c0=${b}&c1=${b + size}` : '';
  const stat = stats[i % 4];
  const reduce = stat === 'bytes' && i % 3 === 0 ? 'sum' : 'max';
  t = performance.now();
  r = await fetch(`${base}/api/comm?h=${process.env.H ?? 300}&w=${process.env.W ?? 500}&stat=${stat}&reduce=${reduce}${zoom}${tok}`);
  await r.arrayBuffer();
  times.push(performance.now() - t);
  if (r.status !== 200) throw new Error(`status ${r.status}`);
}
times.sort((x, y) => x - y);
const p = (f) => times[Math.min(times.length - 1, Math.floor(f * times.length))].toFixed(2);
console.log(`${n} requests: p50 ${p(0.5)} ms, p99 ${p(0.99)} ms, max ${times[times.length - 1].toFixed(2)} ms`);
