#!/usr/bin/env python3
"""Deterministic generator of a large Chrome Trace Event Format JSON (issue "speed", item 5).

usage: python3 bench/gen_chrome_trace.py OUT.json [--mb 500] [--ranks 8] [--seed 1] [--array]

Writes a trace of about `--mb` MiB (it stops after the first training step that reaches the
size, so the file is a little larger) shaped like a PyTorch Kineto trace of a data-parallel
run, the kind that crashes browser-side viewers at a few hundred MB:

- `--ranks` processes (pid 1000 + rank), each with a main thread (`tid` = pid) of nested
  complete (`X`) events: `ProfilerStep#N` > module forward/backward > layers > `aten::`
  operators > `cudaLaunchKernel`/`cudaMemcpyAsync` (stacks 6 to 12 deep, randomly pruned);
  a backward thread (`tid` = pid + 1) with the same kind of stacks written as `B`/`E` pairs;
- per rank a GPU "process" (pid = rank, Kineto's convention) with two streams (`tid` 7 and
  20) holding the kernels and memcpys, each linked to its launch by an `ac2g` flow
  (`s` on the launch, `f` with `"bp": "e"` on the kernel, id = the correlation number);
- `C` counter events (`GPU Memory` with `allocated`/`reserved` series) per rank and step, `i`
  instant events (thread scope) on the main threads, and per step the global
  `Iteration Start` instant and the `PyTorch Profiler` span on the string-named pid
  `"Spans"`/`"Traces"`, as Kineto writes them;
- `M` metadata: `process_name`/`process_sort_index` of every process first,
  `thread_name` of every thread last, after the events they name;
- Kineto's header keys (`schemaVersion`, `deviceProperties`, `distributedInfo`) before
  `traceEvents` and `traceName`/`displayTimeUnit` after it.

Timestamps are microseconds with three decimals (nanosecond resolution), like recent
Kineto. Events are written grouped per rank and step, CPU threads before GPU streams (not
globally in time order, as Kineto writes them). `--array` writes the bare JSON array form
(`[ {...}, ... ]`) instead of the object form, without the header keys.

The output is streamed (one step of one rank in memory at a time); nothing but Python's
standard library is needed; the same arguments always give the same bytes. About a minute
for 500 MiB.
"""

import argparse
import random
import sys

OPS = [
    "aten::mm", "aten::addmm", "aten::add_", "aten::mul", "aten::div", "aten::copy_",
    "aten::empty", "aten::zero_", "aten::linear", "aten::matmul", "aten::relu",
    "aten::layer_norm", "aten::native_layer_norm", "aten::softmax", "aten::_softmax",
    "aten::dropout", "aten::view", "aten::reshape", "aten::transpose", "aten::t",
    "aten::cat", "aten::sum", "aten::mean", "aten::gelu", "aten::embedding",
    "aten::index_select", "aten::to", "aten::_to_copy", "aten::clone", "aten::fill_",
    "aten::bmm", "aten::baddbmm", "aten::scaled_dot_product_attention",
    "aten::_flash_attention_forward", "aten::masked_fill", "aten::sqrt", "aten::rsqrt",
]
KERNELS = [
    "ampere_sgemm_128x64_tn", "ampere_sgemm_64x64_nn", "sm80_xmma_gemm_f16f16_f32",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"
    "(int, float, float const*, float const*, float const*, float*, float*, float*)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
    "at::native::MeanOps<float, float>, unsigned int, float, 4> >",
    "void cunn_SoftMaxForward<4, float, float, float, cunn::SoftMaxForwardEpilogue>",
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
    "flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t>>",
]
MODULES = ["embed", "attn.qkv", "attn.proj", "attn.core", "mlp.fc1", "mlp.act", "mlp.fc2",
           "norm1", "norm2", "head"]
BASE_US = 1712195495000000  # Kineto-like absolute microseconds


def us(ns):
    """Microseconds with three decimals, from integer nanoseconds (exact)."""
    return f"{ns // 1000}.{ns % 1000:03d}"


class Writer:
    """Comma-separated JSON events into a buffered file, counting bytes."""

    def __init__(self, f):
        self.f = f
        self.first = True
        self.size = 0
        self.buf = []
        self.pending = 0

    def ev(self, s):
        if self.first:
            self.first = False
        else:
            s = ",\n" + s
        self.buf.append(s)
        self.pending += len(s)
        if self.pending > 1 << 20:
            self.flush()

    def raw(self, s):
        self.buf.append(s)
        self.pending += len(s)

    def flush(self):
        data = "".join(self.buf)
        self.f.write(data)
        self.size += len(data.encode()) if not data.isascii() else len(data)
        self.buf = []
        self.pending = 0


class Rank:
    """Generates one rank's events, step by step."""

    def __init__(self, rank, rng, w):
        self.rank = rank
        self.pid = 1000 + rank
        self.rng = rng
        self.w = w
        self.ext = rank * 10_000_000
        self.corr = rank * 10_000_000
        self.gpu = []  # GPU stream events of the current step
        self.gpu_free = {7: 0, 20: 0}

    def x(self, tid, cat, name, t, dur, args):
        self.w.ev(
            f'{{"ph": "X", "cat": "{cat}", "name": "{name}", "pid": {self.pid}, "tid": {tid}, '
            f'"ts": {us(t)}, "dur": {us(dur)}, "args": {args}}}'
        )

    def launch(self, tid, t, dur, begin_end):
        """A CUDA runtime call and the kernel it launches on a GPU stream."""
        rng = self.rng
        self.corr += 1
        c = self.corr
        memcpy = rng.random() < 0.12
        name = "cudaMemcpyAsync" if memcpy else "cudaLaunchKernel"
        args = f'{{"External id": {self.ext}, "cbid": {41 if memcpy else 211}, "correlation": {c}}}'
        if begin_end:
            self.w.ev(f'{{"ph": "B", "cat": "cuda_runtime", "name": "{name}", "pid": {self.pid}, '
                      f'"tid": {tid}, "ts": {us(t)}, "args": {args}}}')
            self.w.ev(f'{{"ph": "E", "cat": "cuda_runtime", "name": "{name}", "pid": {self.pid}, '
                      f'"tid": {tid}, "ts": {us(t + dur)}}}')
        else:
            self.x(tid, "cuda_runtime", name, t, dur, args)
        self.w.ev(f'{{"ph": "s", "id": {c}, "pid": {self.pid}, "tid": {tid}, "ts": {us(t)}, '
                  f'"cat": "ac2g", "name": "ac2g"}}')
        stream = 20 if memcpy else 7
        start = max(t + 4000 + rng.randrange(20000), self.gpu_free[stream])
        kdur = 800 + rng.randrange(60000)
        self.gpu_free[stream] = start + kdur
        if memcpy:
            kname, kcat = "Memcpy HtoD (Pageable -> Device)", "gpu_memcpy"
            kargs = (f'{{"External id": {self.ext}, "device": {self.rank}, "context": 1, '
                     f'"stream": {stream}, "correlation": {c}, "bytes": {rng.randrange(1, 1 << 24)}, '
                     f'"memory bandwidth (GB/s)": {rng.random() * 20:.6f}}}')
        else:
            kname, kcat = rng.choice(KERNELS), "kernel"
            kargs = (f'{{"External id": {self.ext}, "queued": 0, "device": {self.rank}, "context": 1, '
                     f'"stream": {stream}, "correlation": {c}, "registers per thread": {rng.choice((32, 64, 128))}, '
                     f'"shared memory": 0, "blocks per SM": {rng.random() * 4:.6f}, '
                     f'"warps per SM": {rng.random() * 32:.6f}, "grid": [{rng.randrange(1, 4096)}, 1, 1], '
                     f'"block": [{rng.choice((128, 256, 512))}, 1, 1], "est. achieved occupancy %": {rng.randrange(100)}}}')
        self.gpu.append((stream, kcat, kname, start, kdur, kargs, c))

    def tree(self, tid, name, cat, t, dur, depth, max_depth, begin_end):
        """One call and, recursively, its children inside [t, t + dur]."""
        rng = self.rng
        self.ext += 1
        args = f'{{"External id": {self.ext}, "Ev Idx": {self.ext % 100000}, "Sequence number": {self.ext // 3}}}'
        if cat == "cpu_op":
            dims = rng.choice(("[[2048, 1024], [1024, 1024]]", "[[32, 128, 64]]", "[[2048], []]", "[]"))
            args = args[:-1] + f', "Input Dims": {dims}, "Input type": ["float", "float"]}}'
        if begin_end:
            self.w.ev(f'{{"ph": "B", "cat": "{cat}", "name": "{name}", "pid": {self.pid}, '
                      f'"tid": {tid}, "ts": {us(t)}, "args": {args}}}')
        else:
            self.x(tid, cat, name, t, dur, args)
        if depth < max_depth and dur > 20000:
            n = rng.randrange(1, 6)
            slot = dur // n
            cursor = t + rng.randrange(1, max(2, slot // 10))
            for _ in range(n):
                cdur = max(1, slot - rng.randrange(1, max(2, slot // 4)) - (cursor - t) % 7)
                if cursor + cdur > t + dur:
                    break
                if depth + 1 >= max_depth - 1 or (depth >= 4 and rng.random() < 0.3):
                    self.launch(tid, cursor, min(cdur, 5000 + rng.randrange(20000)), begin_end)
                else:
                    if depth < 2:
                        cname, ccat = f"nn.Module: {rng.choice(MODULES)}.{depth}", "python_function"
                    else:
                        cname, ccat = rng.choice(OPS), "cpu_op"
                    self.tree(tid, cname, ccat, cursor, cdur, depth + 1, max_depth, begin_end)
                cursor += cdur + rng.randrange(1, 2000)
        if begin_end:
            self.w.ev(f'{{"ph": "E", "cat": "{cat}", "name": "{name}", "pid": {self.pid}, '
                      f'"tid": {tid}, "ts": {us(t + dur)}}}')

    def step(self, k, t0, step_ns):
        rng = self.rng
        self.gpu = []
        self.gpu_free = {7: t0, 20: t0}
        fwd = step_ns * 2 // 5
        self.tree(self.pid, f"ProfilerStep#{k}", "user_annotation", t0, fwd,
                  0, rng.randrange(6, 13), False)
        self.tree(self.pid + 1, f"autograd::engine::evaluate_function: Step{k}Backward0",
                  "cpu_op", t0 + fwd + 1000, step_ns - fwd - 3000, 0, rng.randrange(6, 13), True)
        for j in range(3):
            self.w.ev(f'{{"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "marker_{j}", '
                      f'"pid": {self.pid}, "tid": {self.pid}, "ts": {us(t0 + j * step_ns // 3)}}}')
        for stream, kcat, kname, start, kdur, kargs, c in self.gpu:
            self.w.ev(f'{{"ph": "X", "cat": "{kcat}", "name": "{kname}", "pid": {self.rank}, '
                      f'"tid": {stream}, "ts": {us(start)}, "dur": {us(kdur)}, "args": {kargs}}}')
            self.w.ev(f'{{"ph": "f", "id": {c}, "pid": {self.rank}, "tid": {stream}, '
                      f'"ts": {us(start)}, "cat": "ac2g", "name": "ac2g", "bp": "e"}}')
        for j in range(4):
            t = t0 + j * step_ns // 4
            self.w.ev(f'{{"ph": "C", "name": "GPU Memory", "pid": {self.pid}, "ts": {us(t)}, '
                      f'"args": {{"allocated": {rng.randrange(1 << 30, 1 << 34)}, '
                      f'"reserved": {1 << 34}}}}}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=500, help="target size in MiB (default 500)")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--array", action="store_true", help="bare JSON array form")
    a = ap.parse_args()
    target = int(a.mb * (1 << 20))
    rng = random.Random(a.seed)
    with open(a.out, "w", encoding="utf-8", newline="\n") as f:
        w = Writer(f)
        if a.array:
            w.raw("[\n")
        else:
            props = ", ".join(
                f'{{"id": {r}, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85031714816, '
                f'"computeMajor": 8, "computeMinor": 0, "numSms": 108}}' for r in range(a.ranks))
            w.raw('{\n  "schemaVersion": 1,\n  "deviceProperties": [' + props + '],\n'
                  f'  "distributedInfo": {{"backend": "nccl", "rank": 0, "world_size": {a.ranks}}},\n'
                  '  "traceEvents": [\n')
        ranks = [Rank(r, rng, w) for r in range(a.ranks)]
        for r in ranks:
            w.ev(f'{{"name": "process_name", "ph": "M", "ts": {us(BASE_US * 1000)}, "pid": {r.pid}, '
                 f'"tid": 0, "args": {{"name": "python3 rank {r.rank}"}}}}')
            w.ev(f'{{"name": "process_sort_index", "ph": "M", "ts": {us(BASE_US * 1000)}, '
                 f'"pid": {r.pid}, "tid": 0, "args": {{"sort_index": {r.pid}}}}}')
            w.ev(f'{{"name": "process_name", "ph": "M", "ts": {us(BASE_US * 1000)}, "pid": {r.rank}, '
                 f'"tid": 0, "args": {{"name": "GPU {r.rank}"}}}}')
            w.ev(f'{{"name": "process_labels", "ph": "M", "ts": {us(BASE_US * 1000)}, "pid": {r.rank}, '
                 f'"tid": 0, "args": {{"labels": "NVIDIA A100-SXM4-80GB"}}}}')
        step_ns = 60_000_000
        k = 0
        while True:
            t0 = BASE_US * 1000 + k * (step_ns + 500_000)
            w.ev(f'{{"ph": "X", "cat": "Trace", "ts": {us(t0)}, "dur": {us(step_ns)}, "pid": "Spans", '
                 f'"tid": "PyTorch Profiler", "name": "PyTorch Profiler ({k})", "args": {{"Op count": 0}}}}')
            w.ev(f'{{"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", '
                 f'"tid": "Trace PyTorch Profiler", "ts": {us(t0)}}}')
            for r in ranks:
                r.step(k, t0 + rng.randrange(100_000), step_ns)
            w.flush()
            k += 1
            if w.size >= target:
                break
        for r in ranks:
            for tid, tname in ((r.pid, "python main"), (r.pid + 1, "python backward")):
                w.ev(f'{{"name": "thread_name", "ph": "M", "ts": {us(BASE_US * 1000)}, "pid": {r.pid}, '
                     f'"tid": {tid}, "args": {{"name": "thread {tid} ({tname})"}}}}')
            for stream in (7, 20):
                w.ev(f'{{"name": "thread_name", "ph": "M", "ts": {us(BASE_US * 1000)}, "pid": {r.rank}, '
                     f'"tid": {stream}, "args": {{"name": "stream {stream}"}}}}')
        if a.array:
            w.raw("\n]\n")
        else:
            w.raw('\n  ],\n  "traceName": "gen_chrome_trace.json",\n  "displayTimeUnit": "ms"\n}\n')
        w.flush()
    print(f"{a.out}: {w.size} bytes, {k} steps x {a.ranks} ranks", file=sys.stderr)


if __name__ == "__main__":
    main()
