#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Tests of the Python bindings (ranks as threads). TAP on stdout.

    /usr/bin/python3 userspace/python/test_dlcp.py [tcp|dlcp] [--no-torch]

Over TCP on any host; over DLCP in the VM with the module loaded.
"""
import contextlib
import errno
import os
import socket
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import dlcp  # noqa: E402

TRANSPORT = dlcp.TRANSPORT_DLCP if "dlcp" in sys.argv[1:] else dlcp.TRANSPORT_TCP
results = []


def ranks(world, fn, timeout_ms=10000, addr="127.0.0.1"):
    """Run fn(group, rank) on @world ranks (threads) that meet through a
    store, each on a port the kernel chooses."""
    store = dlcp.DictStore(30)
    out, errs = [None] * world, [None] * world

    def run(r):
        try:
            g = dlcp.Group.from_env(rank=r, world_size=world, store=store, addr=addr,
                                    transport=TRANSPORT, timeout_ms=timeout_ms)
        except Exception as e:
            errs[r] = e
            return
        try:
            out[r] = fn(g, r)
        except Exception as e:
            errs[r] = e
        try:
            g.close(linger_ms=2000)
        except OSError as e:  # a peer that failed first may be gone
            if not errs[r]:
                errs[r] = e
    ts = [threading.Thread(target=run, args=(r,)) for r in range(world)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out, errs


@contextlib.contextmanager
def environment(keys):
    """Within it, set(env) makes the variables @keys exactly @env; on exit
    they are as they were."""
    saved = {k: os.environ.get(k) for k in keys}

    def set_env(env):
        for k in keys:
            os.environ.pop(k, None)
        os.environ.update(env)
    try:
        yield set_env
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def check(name, cond):
    results.append(bool(cond))
    print("%sok %d - %s" % ("" if cond else "not ", len(results), name), flush=True)


def vals(r, n):
    return ((np.arange(n) * 7 + r * 13) % 101 - 50).astype(np.float32)


def t_allreduce(world, n, reduce, algo=dlcp.ALGO_RING):
    def fn(g, r):
        a = vals(r, n)
        g.allreduce(a, tag=1, iteration=7, reduce=reduce, algo=algo)
        return a
    out, errs = ranks(world, fn)
    s = sum(vals(r, n) for r in range(world))
    want = s if reduce == dlcp.REDUCE_SUM else (s / np.float32(world)).astype(np.float32)
    check("allreduce%s world=%d n=%d reduce=%d exact" % (
        " direct" if algo == dlcp.ALGO_DIRECT else "", world, n, reduce),
        not any(errs) and all(np.array_equal(o, want) for o in out))


def t_ps(world, n):
    def fn(g, r):
        a = vals(r, n)
        b = np.zeros(n, np.float32)
        g.ps_push_pull(a, b, reduce=dlcp.REDUCE_SUM, budget_ppm=0)
        return b
    out, errs = ranks(world, fn)
    s = sum(vals(r, n) for r in range(world))
    check("ps world=%d n=%d exact" % (world, n),
          not any(errs) and all(np.array_equal(o, s) for o in out))


def t_rs_ag(world, n):
    def fn(g, r):
        a = vals(r, n)
        g.reduce_scatter(a, reduce=dlcp.REDUCE_SUM, iteration=1)
        g.all_gather(a, iteration=2)
        return a
    out, errs = ranks(world, fn)
    s = sum(vals(r, n) for r in range(world))
    check("reduce_scatter + all_gather world=%d n=%d == allreduce" % (world, n),
          not any(errs) and all(np.array_equal(o, s) for o in out))


def t_moves(world):
    """reduce to a root, gather, scatter and all-to-all (equal and uneven
    parts, float64 travelling as bytes) against numpy."""
    root = world - 1
    # rank s sends (s + 2 d) % 3 * 4 elements to rank d (some parts empty)
    cnt = [[(s + 2 * d) % 3 * 4 for d in range(world)] for s in range(world)]

    def part(s, d):
        return np.arange(cnt[s][d], dtype=np.float64) + 100 * s + 10 * d

    def fn(g, r):
        a = vals(r, 1001)
        g.reduce(a, root=root, reduce=dlcp.REDUCE_SUM, iteration=1)
        gat = np.zeros(world * 5, np.int16) if r == root else None
        g.gather(np.arange(5, dtype=np.int16) + r, gat, root=root, iteration=2)
        sc = np.zeros(3, np.float32)
        g.scatter(np.arange(3 * world, dtype=np.float32) if r == root else None, sc,
                  root=root, iteration=3)
        eq = np.zeros(world * 2, np.int32)
        g.all_to_all(np.arange(world * 2, dtype=np.int32) + 10 * r, eq, iteration=4)
        rc = [cnt[p][r] for p in range(world)]
        uv = np.zeros(sum(rc), np.float64)
        g.all_to_all(np.concatenate([part(r, d) for d in range(world)]), uv,
                     scounts=cnt[r], rcounts=rc, iteration=5)
        return a, gat, sc, eq, uv
    out, errs = ranks(world, fn)
    s = sum(vals(r, 1001) for r in range(world))
    ok = not any(errs)
    for r, (a, gat, sc, eq, uv) in enumerate(out if ok else []):
        ok &= np.array_equal(a, s if r == root else vals(r, 1001))
        ok &= r != root or np.array_equal(
            gat, np.concatenate([np.arange(5, dtype=np.int16) + p for p in range(world)]))
        ok &= np.array_equal(sc, np.arange(3 * r, 3 * r + 3, dtype=np.float32))
        ok &= np.array_equal(eq, np.array([2 * r + k + 10 * p for p in range(world)
                                           for k in range(2)], np.int32))
        ok &= np.array_equal(uv, np.concatenate([part(p, r) for p in range(world)]))
    check("reduce, gather, scatter, all_to_all (equal, uneven float64) world=%d root=%d"
          % (world, root), ok)


def t_torch():
    if "--no-torch" in sys.argv[1:]:
        check("torch tensors # SKIP --no-torch", True)
        return
    try:
        import torch
    except ImportError:
        check("# SKIP torch not installed", True)
        return

    def fn(g, r):
        t = torch.full((1001,), float(r + 1))
        g.allreduce(t, reduce=dlcp.REDUCE_MEAN)
        return t
    out, errs = ranks(3, fn)
    check("allreduce of torch tensors", not any(errs) and
          all(bool((o == 2.0).all()) for o in out))


def t_mismatch():
    def fn(g, r):
        g.allreduce(np.zeros(100 + 10 * r, np.float32), timeout_ms=3000)
    out, errs = ranks(2, fn)
    check("size mismatch raises OSError(EMSGSIZE) on every rank",
          all(isinstance(e, OSError) and e.errno == errno.EMSGSIZE for e in errs))


def t_bad_input():
    def fn(g, r):
        bad = []
        for arr in (np.zeros(4, np.float64), np.zeros((4, 4), np.float32)[:, 1]):
            try:
                g.allreduce(arr)
            except ValueError:
                bad.append(True)
        return bad
    out, errs = ranks(1, fn)
    check("float64 / non-contiguous buffers rejected", out[0] == [True, True])


def t_p2p(addr="127.0.0.1"):
    def fn(g, r):
        if r == 0:
            g.send(g.addr(1), np.arange(4, dtype=np.float32), tensor_id=9, iteration=3)
            return g.addr(0)
        return g.recv(timeout_ms=5000)
    out, errs = ranks(2, fn, addr=addr)
    ok = not any(errs) and out[1] is not None
    if ok:
        data, info, lost = out[1]
        ok = (np.frombuffer(data, np.float32).tolist() == [0, 1, 2, 3] and
              info["tensor_id"] == 9 and info["iteration"] == 3 and lost == [] and
              info["src"] == out[0])
    check("send/recv one tensor with metadata and source (%s)" % addr, ok)


def have_ipv6():
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.bind(("::1", 0))
        s.close()
        return True
    except OSError:
        return False


def t_rendezvous():
    """Ranks meet through a store: ports of their own, IPv6 too."""
    def fn(g, r):
        a = vals(r, 1001)
        g.allreduce(a, reduce=dlcp.REDUCE_SUM)
        return a, [g.addr(i) for i in range(g.world)]
    out, errs = ranks(3, fn)
    s = sum(vals(r, 1001) for r in range(3))
    ok = not any(errs) and all(np.array_equal(o[0], s) for o in out)
    addrs = out[0][1] if ok else []
    check("rendezvous through a store: every rank on 127.0.0.1, ports the kernel chose "
          "(%s)" % ", ".join(addrs), ok and len({a for a in addrs}) == 3 and
          all(o[1] == addrs for o in out) and all(a.startswith("127.0.0.1:") for a in addrs))
    if not have_ipv6():
        check("rendezvous over ::1 # SKIP no IPv6 here", True)
        return
    out, errs = ranks(3, fn, addr="::1")
    ok = not any(errs) and all(np.array_equal(o[0], s) for o in out)
    check("rendezvous and allreduce over ::1 (%s)" % (
        ", ".join(out[0][1]) if ok else errs), ok and out[0][1][0].startswith("[::1]:"))
    t_p2p("::1")


def t_endpoints():
    """Where a rank binds without DLCP_ADDR: the route to MASTER_ADDR, the
    address of DLCP_IFNAME; the port DLCP_PORT + LOCAL_RANK when set."""
    keys = ("MASTER_ADDR", "DLCP_ADDR", "DLCP_IFNAME", "DLCP_PORT", "LOCAL_RANK")

    def fn(g, r):
        return [g.addr(i) for i in range(g.world)]

    with environment(keys) as set_env:
        def run(env, world=2):
            set_env(env)
            out, errs = ranks(world, fn, addr=None)
            return out[0] if not any(errs) and all(o == out[0] for o in out) else errs

        a1 = run({"MASTER_ADDR": "127.0.0.1"})
        a2 = run({"MASTER_ADDR": "192.0.2.1", "DLCP_IFNAME": "lo"})
        with socket.socket() as s:      # a port no one holds now
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        a3 = run({"DLCP_ADDR": "127.0.0.1", "DLCP_PORT": str(port - 1), "LOCAL_RANK": "1"},
                 world=1)
    check("no DLCP_ADDR: each rank binds the address that routes to MASTER_ADDR=127.0.0.1 "
          "(%s)" % a1, isinstance(a1, list) and len(a1) == 2 and
          all(a.startswith("127.0.0.1:") for a in a1))
    check("DLCP_IFNAME=lo: each rank binds lo's address (%s)" % a2,
          isinstance(a2, list) and all(a.startswith("127.0.0.1:") for a in a2))
    check("DLCP_PORT=%d, LOCAL_RANK=1: the rank binds port %d (%s)" % (port - 1, port, a3),
          a3 == ["127.0.0.1:%d" % port])


def t_large_world(world=4096):
    """The rendezvous of the largest group (GROUP_MAX ranks, as threads):
    every rank gets every address, in rank order. The first ranks wait
    until the last thread has started: on a slow (debug) kernel that takes
    minutes, so the store's timeout is long; this checks the result, not
    the speed."""
    from dlcp import rendezvous
    store = dlcp.DictStore(900)
    out = [None] * world

    def run(r):
        try:
            out[r] = rendezvous.exchange(store, r, world, "10.%d.%d.%d:%d" % (
                r >> 16, (r >> 8) & 255, r & 255, 1000 + r))
        except Exception as e:
            out[r] = e
    ts = [threading.Thread(target=run, args=(r,)) for r in range(world)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    want = out[0] if isinstance(out[0], list) else None
    errors = [o for o in out if not isinstance(o, list)]
    if errors:
        print("# %d ranks failed, the first: %r" % (len(errors), errors[0]))
    check("rendezvous of %d ranks through one store: all agree, rank r at index r" % world,
          world == dlcp.GROUP_MAX and want is not None and len(want) == world and
          all(o == want for o in out) and
          all(want[r].endswith(":%d" % (1000 + r)) for r in range(world)))


def t_names():
    """Host names resolve (localhost:5000 used to fail); port 0 binds any."""
    try:
        g = dlcp.Group(0, ["localhost:0"], TRANSPORT)
        a = g.addr(0)
        g.close()
    except Exception as e:
        a = "%s: %s" % (type(e).__name__, e)
    bad = []
    for s in ("nohost.invalid:1", "127.0.0.1", "::1:5", "[::1]:x", "1.2.3.4:70000"):
        try:
            dlcp.Group(0, [s], TRANSPORT)
            bad.append(s)
        except dlcp.ConfigError as e:
            if s.split(":")[0].strip("[") not in str(e):
                bad.append("%s: %s" % (s, e))
    check("Group(0, ['localhost:0']) binds 127.0.0.1 on a port of its own (%s); bad "
          "addresses raise ConfigError naming them%s" % (a, ": %s" % bad if bad else ""),
          a.startswith("127.0.0.1:") and not a.endswith(":0") and not bad)


def t_config_errors():
    """Every misconfiguration names the variable or the address."""
    keys = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "DLCP_ADDR", "DLCP_IFNAME",
            "DLCP_GROUP_FILE", "DLCP_SAME_HOST", "DLCP_ADDR_PLAN", "DLCP_PORT",
            "DLCP_TRANSPORT")
    cases = [
        ({}, None, "RANK"),
        ({"RANK": "0"}, None, "WORLD_SIZE"),
        ({"RANK": "one", "WORLD_SIZE": "2"}, None, "RANK='one'"),
        ({"RANK": "0", "WORLD_SIZE": "2.5"}, None, "WORLD_SIZE='2.5'"),
        ({"RANK": "2", "WORLD_SIZE": "2"}, None, "RANK=2"),
        ({"RANK": "0", "WORLD_SIZE": "5000"}, None, "WORLD_SIZE=5000"),
        ({"RANK": "0", "WORLD_SIZE": "2"}, None, "MASTER_ADDR"),
        ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "no-such-host.invalid"}, None,
         "MASTER_ADDR=no-such-host.invalid"),
        ({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "x"},
         None, "MASTER_PORT='x'"),
        ({"RANK": "0", "WORLD_SIZE": "2", "DLCP_ADDR": "192.0.2.1",
          "DLCP_TRANSPORT": "tcp"}, dlcp.DictStore(1),
         "192.0.2.1"),
        ({"RANK": "0", "WORLD_SIZE": "2", "DLCP_IFNAME": "nosuchif9"}, dlcp.DictStore(1),
         "DLCP_IFNAME=nosuchif9"),
        ({"RANK": "0", "WORLD_SIZE": "2", "DLCP_ADDR": "127.0.0.1",
          "DLCP_TRANSPORT": "udp"}, dlcp.DictStore(1), "DLCP_TRANSPORT='udp'"),
        ({"RANK": "0", "WORLD_SIZE": "2", "DLCP_ADDR_PLAN": "10.78"}, None,
         "DLCP_ADDR_PLAN='10.78'"),
    ]
    bad = []
    with environment(keys) as set_env:
        for env, store, want in cases:
            set_env(env)
            try:
                dlcp.Group.from_env(transport=-1, store=store).close()
                bad.append("%s: no error" % want)
            except dlcp.ConfigError as e:
                if want not in str(e):
                    bad.append("%s: %s" % (want, e))
            except Exception as e:
                bad.append("%s: %s %s" % (want, type(e).__name__, e))
    for b in bad:
        print("# " + b)
    check("misconfiguration raises ConfigError naming the variable/address (%d cases)"
          % len(cases), not bad)


def t_classes():
    a = np.array([0.1, -9, 0, 0, 3, 0.5], np.float32)
    check("seg_classes", dlcp.seg_classes(a, 8, 0.3) == bytes([0, 1, 1]) and
          dlcp.seg_classes(a, 8, 0.5) == bytes([0, 1, 0]))


def t_quant(world, n, bits, hadamard):
    L = 127 if bits == 8 else 7

    def v(r):
        a = ((np.arange(n) * 7 + r * 13) % (2 * L + 1) - L).astype(np.float32)
        if r == 0:
            a[0] = L
        return a

    def fn(g, r):
        a, b, c = v(r), v(r), v(r)
        st = g.allreduce_q(a, bits=bits, hadamard=hadamard, seed=5, tag=2, iteration=1,
                           reduce=dlcp.REDUCE_SUM)
        g.ps_push_pull_q(b, bits=bits, hadamard=hadamard, seed=5, tag=3, iteration=1,
                         reduce=dlcp.REDUCE_SUM)
        qs = dlcp.QState()
        g.reduce_scatter_q(c, qs, bits=bits, hadamard=hadamard, seed=5, tag=4,
                           iteration=1, reduce=dlcp.REDUCE_SUM)
        g.all_gather_q(c, qs, tag=4, iteration=2)
        return a, b, c, st
    out, errs = ranks(world, fn)
    s = sum(v(r) for r in range(world))
    if hadamard:  # rotated: within the quantization error, ranks agree
        ok = not any(errs) and all(
            np.linalg.norm(o[k] - s) <= 2.0 / L * np.linalg.norm(s) and
            np.array_equal(o[k], out[0][k]) for o in out for k in (0, 2))
    else:         # integers at the shared scale: exact
        ok = not any(errs) and all(np.array_equal(o[k], s) for o in out for k in range(3))
    check("quantized allreduce/ps/rs+ag %d bits%s world=%d n=%d" % (
        bits, " + hadamard" if hadamard else "", world, n), ok)


def main():
    print("TAP version 13")
    for w in (1, 2, 4):
        t_allreduce(w, 1001, dlcp.REDUCE_SUM)
    t_allreduce(3, 5000, dlcp.REDUCE_MEAN)
    t_allreduce(4, 5000, dlcp.REDUCE_MEAN, dlcp.ALGO_DIRECT)
    t_ps(3, 5000)
    t_rs_ag(3, 999)
    t_moves(1)
    t_moves(3)
    t_torch()
    t_mismatch()
    t_bad_input()
    t_p2p()
    t_rendezvous()
    t_endpoints()
    t_large_world()
    t_names()
    t_config_errors()
    t_classes()
    t_quant(3, 5000, 8, False)
    t_quant(2, 1001, 4, False)
    t_quant(4, 5000, 8, True)
    print("1..%d" % len(results))
    print("# %d passed, %d failed" % (sum(results), len(results) - sum(results)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
