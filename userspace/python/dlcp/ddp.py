# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""A DDP communication hook that sends gradient buckets through libdlcp.

    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    import dlcp
    from dlcp import ddp as dlcp_ddp          # or: import dlcp_ddp (old name)

    dist.init_process_group("gloo")          # rendezvous only (env://)
    model = DDP(net)
    # the DLCP group meets through the process group's store
    state = dlcp_ddp.DlcpHookState(dlcp.Group.from_env(), budget_ppm=50000)
    model.register_comm_hook(state, dlcp_ddp.dlcp_hook)

Each bucket is averaged (unbiased: over the contributions that arrived)
with a ring all-reduce ("ring"), an all-reduce in which every rank sends each
chunk straight to its owner and back ("direct", one round instead of N - 1
each way) or through a parameter server on rank 0
("ps"), on a background thread that completes the bucket's Future. DDP
calls the hook for the same buckets in the same order on every rank, so the
worker thread runs the collectives in that order and keys their messages by
(iteration, bucket index); the bucket index is also the DLCP layer, so the
output-side layers (bucket 0) get the highest priority class.
"""
import queue
import threading
import time
from typing import Any, Callable, List, Optional

import torch
import torch.distributed as dist

import dlcp


class DlcpHookState:
    """The state of dlcp_hook(): the group, each bucket's loss budgets,
    the algorithm, and a thread that runs the buckets' collectives in order
    (ring, direct or parameter server; fp32 or quantized to 8 or 4 bits)."""

    def __init__(self, group: dlcp.Group, budget_ppm: int = 0,
                 budget2_ppm: Optional[int] = None, algo: str = "ring",
                 reduce: int = dlcp.REDUCE_MEAN, timeout_ms: int = 0,
                 layer_of_bucket: Optional[Callable[[int], int]] = None,
                 compress: int = 0, hadamard: bool = False, seed: int = 0,
                 fit: bool = False) -> None:
        # compress: 0 (fp32 on the wire), 8 or 4 (homomorphic quantization,
        # dlcp_allreduce_q / dlcp_ps_push_pull_q); hadamard: rotate first
        if algo not in ("ring", "direct", "ps"):
            raise ValueError("algo is 'ring', 'direct' or 'ps'")
        self.group = group
        self.budget_ppm = budget_ppm
        self.budget2_ppm = budget_ppm if budget2_ppm is None else budget2_ppm
        self.algo = algo
        self.reduce = reduce
        self.timeout_ms = timeout_ms
        self.layer_of_bucket = layer_of_bucket or (lambda i: min(i, 0xffff))
        if compress not in (0, 4, 8):
            raise ValueError("compress is 0, 4 or 8")
        if compress and algo == "direct":
            raise ValueError("compression runs over the ring or the parameter server")
        self.compress, self.hadamard, self.seed = compress, bool(hadamard), seed
        self.fit = bool(fit)   # THC: levels / world, so every sum fits the bits
        self.iteration = 0
        self.stats = {"buckets": 0, "bytes_lost": 0, "elems_lost": 0,
                      "elems_fallback": 0, "comm_s": 0.0, "bytes_sent": 0}
        self.bucket_ms: List[float] = []     # time of each bucket's collective
        self._q: "queue.Queue[Any]" = queue.Queue()
        self._t = threading.Thread(target=self._worker, name="dlcp-ddp", daemon=True)
        self._t.start()

    def _worker(self):
        while True:
            item = self._q.get()
            if item is None:
                return
            it, idx, buf, fut = item
            try:
                flat = buf if (buf.dtype == torch.float32 and buf.is_contiguous()) \
                    else buf.detach().to(torch.float32).contiguous()
                t0 = time.perf_counter()
                kw = dict(tag=idx, iteration=it, layer=self.layer_of_bucket(idx),
                          budget_ppm=self.budget_ppm, budget2_ppm=self.budget2_ppm,
                          reduce=self.reduce, timeout_ms=self.timeout_ms)
                if self.compress:
                    qkw = dict(bits=self.compress, hadamard=self.hadamard, seed=self.seed,
                               fit=self.fit)
                    kw.update(qkw)
                    st = (self.group.allreduce_q(flat, **kw) if self.algo == "ring"
                          else self.group.ps_push_pull_q(flat, flat, **kw))
                elif self.algo != "ps":
                    st = self.group.allreduce(flat, algo=dlcp.ALGO_DIRECT
                                              if self.algo == "direct" else dlcp.ALGO_RING,
                                              **kw)
                else:
                    st = self.group.ps_push_pull(flat, flat, **kw)
                dt = time.perf_counter() - t0
                self.stats["comm_s"] += dt
                self.bucket_ms.append(dt * 1000)
                self.stats["buckets"] += 1
                for k in ("bytes_lost", "elems_lost", "elems_fallback", "bytes_sent"):
                    self.stats[k] += st[k]
                if flat is not buf:
                    buf.copy_(flat)
                fut.set_result(buf)
            except Exception as e:  # surfaces in backward()
                fut.set_exception(e)

    def close(self) -> None:
        """Stop the thread once the queued buckets are done."""
        self._q.put(None)
        self._t.join()


def dlcp_hook(state: DlcpHookState,
              bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """DDP comm hook: returns a Future of the averaged bucket."""
    fut: "torch.futures.Future[torch.Tensor]" = torch.futures.Future()
    state._q.put((state.iteration, bucket.index(), bucket.buffer(), fut))
    if bucket.is_last():
        state.iteration += 1
    return fut
