# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""DeAR scheduling for the DLCP DDP hook: decoupled all-reduce.

    state = dlcp_dear.DearState(group, ddp.module,
                                lambda ps: torch.optim.SGD(ps, lr=0.02, momentum=0.9),
                                budget_ppm=50000, compress=8)
    ddp.register_comm_hook(state, dlcp_dear.dear_hook)
    for x, y in data:
        loss = lossf(ddp(x), y)       # pre-forward hooks: finish the all-gather
        loss.backward()               # of each layer, then update it
    state.flush()                     # last update, before evaluating

In backward, the hook starts each bucket's reduce-scatter on the worker
thread as soon as DDP hands it over, and returns at once (DDP does not wait:
the gradients it writes are the local ones and are ignored). When the last
bucket of an iteration is in, the all-gathers are queued in forward order
(the bucket holding the first layers first). The next forward pass runs a
pre-forward hook per layer that waits only for that layer's all-gather,
copies the averaged gradient in and steps that parameter's optimizer, so
the all-gather of later layers overlaps the forward pass of earlier ones.
Do not call the optimizer's step() or zero_grad() yourself: the state owns
one optimizer per parameter (make_optimizer([p])); per-parameter SGD is the
same arithmetic as one optimizer over all of them.

Tensor fusion is DDP's bucketing: small gradients are fused into buckets
of bucket_cap_mb (tune it; the first bucket's size is
dist._DEFAULT_FIRST_BUCKET_BYTES in 1.13). With compress=8/4 the two halves
are dlcp_reduce_scatter_q / dlcp_all_gather_q (integer sums on the wire
both ways, the state between them kept per bucket); otherwise the fp32
dlcp_reduce_scatter / dlcp_all_gather.
"""
import time
from typing import Any, Callable, Dict, Iterable, List, Tuple

import torch
import torch.distributed as dist

import dlcp
from dlcp import ddp as dlcp_ddp


class DearState(dlcp_ddp.DlcpHookState):
    """The state of dear_hook(): DlcpHookState's, plus an optimizer per
    parameter of @module (@make_optimizer([p])) that is stepped when the
    parameter's all-gather has arrived, before its layer's next forward."""

    def __init__(self, group: dlcp.Group, module: torch.nn.Module,
                 make_optimizer: Callable[[Iterable[torch.nn.Parameter]], Any],
                 **kw: Any) -> None:
        # id(param) -> (all-gather future, flat buffer, off, n)
        self._pending: Dict[int, Tuple[Any, Any, int, int]] = {}
        self._cur: List[Any] = []           # buckets of the iteration in backward
        self._err = None
        self._opt = {}
        self._hooks = []
        super().__init__(group, **kw)
        self.stats.update({"rs_s": 0.0, "ag_s": 0.0, "wait_s": 0.0})
        for m in module.modules():
            ps = [p for p in m.parameters(recurse=False) if p.requires_grad]
            if not ps:
                continue
            for p in ps:
                self._opt[id(p)] = (p, make_optimizer([p]))
            self._hooks.append(m.register_forward_pre_hook(self._pre_forward))

    def _worker(self):
        while True:
            item = self._q.get()
            if item is None:
                return
            kind, it, idx, buf, qs, fut = item
            try:
                if self._err is not None:
                    raise self._err
                kw = dict(tag=idx, iteration=it, layer=self.layer_of_bucket(idx),
                          timeout_ms=self.timeout_ms)
                t0 = time.perf_counter()
                if kind == "rs":
                    if qs is not None:
                        st = self.group.reduce_scatter_q(
                            buf, qs, bits=self.compress, hadamard=self.hadamard,
                            seed=self.seed, fit=self.fit, budget_ppm=self.budget_ppm,
                            reduce=self.reduce, **kw)
                    else:
                        st = self.group.reduce_scatter(buf, budget_ppm=self.budget_ppm,
                                                       reduce=self.reduce, **kw)
                else:
                    if qs is not None:
                        st = self.group.all_gather_q(buf, qs, budget_ppm=self.budget2_ppm,
                                                     **kw)
                    else:
                        st = self.group.all_gather(buf, budget_ppm=self.budget2_ppm, **kw)
                dt = time.perf_counter() - t0
                self.stats["comm_s"] += dt
                self.stats["rs_s" if kind == "rs" else "ag_s"] += dt
                if kind == "ag":
                    self.stats["buckets"] += 1
                for k in ("bytes_lost", "elems_lost", "elems_fallback", "bytes_sent"):
                    self.stats[k] += st[k]
                if fut is not None:
                    fut.set_result(buf)
            except Exception as e:  # surfaces in the next forward pass
                self._err = e
                if fut is not None:
                    fut.set_exception(e)

    def _apply(self, pid):
        fut, buf, off, n = self._pending.pop(pid)
        t0 = time.perf_counter()
        fut.wait()
        self.stats["wait_s"] += time.perf_counter() - t0
        p, opt = self._opt[pid]
        with torch.no_grad():
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            p.grad.copy_(buf[off:off + n].view_as(p))
        opt.step()
        with torch.no_grad():
            p.grad.zero_()

    def _pre_forward(self, module, inputs):
        for p in module.parameters(recurse=False):
            if id(p) in self._pending:
                self._apply(id(p))

    def flush(self) -> None:
        """Finish every pending all-gather and update (before evaluating)."""
        for pid in list(self._pending):
            self._apply(pid)

    def close(self) -> None:
        """Finish what is pending, remove the hooks, stop the thread."""
        self.flush()
        for h in self._hooks:
            h.remove()
        super().close()


def dear_hook(state: DearState,
              bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """DDP comm hook: reduce-scatter now, all-gather before the next forward."""
    it, idx = state.iteration, bucket.index()
    buf = bucket.buffer().detach().to(torch.float32).clone()
    qs = dlcp.QState() if state.compress else None
    state._q.put(("rs", it, idx, buf, qs, None))
    state._cur.append((idx, buf, qs, list(bucket.parameters())))
    if bucket.is_last():
        for idx_, buf_, qs_, params in sorted(state._cur, key=lambda e: -e[0]):
            agf: "torch.futures.Future[None]" = torch.futures.Future()
            state._q.put(("ag", it, idx_, buf_, qs_, agf))
            off = 0
            for p in params:
                state._pending[id(p)] = (agf, buf_, off, p.numel())
                off += p.numel()
        state._cur = []
        state.iteration += 1
    fut: "torch.futures.Future[torch.Tensor]" = torch.futures.Future()
    fut.set_result(bucket.buffer())
    return fut
