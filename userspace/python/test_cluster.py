#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Host tests of what a cluster job goes through, over libdlcp's TCP
transport on 127.0.0.1, ranks as processes. TAP on stdout.

    /usr/bin/python3 userspace/python/test_cluster.py

1. A rank killed (or stopped: alive to TCP, silent) in the middle of a
   collective: every other rank's collective ends with an OSError
   (ETIMEDOUT, ECONNRESET, EPIPE...) within its timeout (DLCP_TIMEOUT),
   without spinning the CPU meanwhile.
2. torchrun (python3 -m dlcp.run) starts 2 workers that meet through its
   store and all-reduce (skipped without torch).
3. make install-python installs the dlcp package and dlcp-run; the old
   module names (dlcp_ddp, dlcp_dear) still import.

No fixed port anywhere: the ranks meet through a store in a temporary
directory (dlcp.DirStore) or torchrun's, on ports the kernel chooses.
"""
import errno
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

results = []


def check(name, cond):
    results.append(bool(cond))
    print("%sok %d - %s" % ("" if cond else "not ", len(results), name), flush=True)


def child(rank, world, path):
    """One rank: all-reduce until the group breaks; report as a JSON line."""
    import numpy as np
    import dlcp
    g = dlcp.Group.from_env(rank=rank, world_size=world, store=dlcp.DirStore(path, 20),
                            addr="127.0.0.1", transport=dlcp.TRANSPORT_TCP)
    a = np.ones(1 << 20, np.float32)
    it = 0
    t_err = None
    try:
        while it < 100000:
            g.allreduce(a, tag=1, iteration=it)
            it += 1
            if it == 3:
                open(os.path.join(path, "running.%d" % rank), "w").close()
    except OSError as e:
        t_err = time.monotonic()
        ru = resource.getrusage(resource.RUSAGE_SELF)
        print(json.dumps({"rank": rank, "errno": e.errno, "msg": str(e), "iters": it,
                          "t_err": t_err, "cpu": ru.ru_utime + ru.ru_stime}), flush=True)
    try:
        g.close(linger_ms=0)
    except OSError:
        pass


def t_peer_killed(world=3, timeout_s=3, sig=signal.SIGKILL):
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, DLCP_TIMEOUT=str(timeout_s), PYTHONDONTWRITEBYTECODE="1")
        procs = [subprocess.Popen([sys.executable, __file__, "child", str(r), str(world), d],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                  text=True) for r in range(world)]
        victim = procs[world - 1]
        end = time.monotonic() + 30
        while time.monotonic() < end and not all(
                os.path.exists(os.path.join(d, "running.%d" % r)) for r in range(world)):
            if any(p.poll() is not None for p in procs):
                break
            time.sleep(0.02)
        started = all(os.path.exists(os.path.join(d, "running.%d" % r)) for r in range(world))
        cpu0 = {}
        for r, p in enumerate(procs[:-1]):
            try:
                with open("/proc/%d/stat" % p.pid) as f:
                    st = f.read().rsplit(")", 1)[1].split()
                cpu0[r] = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
            except OSError:
                cpu0[r] = None
        t_kill = time.monotonic()
        victim.send_signal(sig)
        outs = []
        for p in procs[:-1]:
            try:
                o, e = p.communicate(timeout=timeout_s * 3 + 10)
            except subprocess.TimeoutExpired:
                p.kill()
                o, e = p.communicate()
                o += '{"hung": true}'
            outs.append((o, e))
        if sig != signal.SIGKILL:
            victim.kill()
        victim.wait()
    reps = []
    for r, (o, e) in enumerate(outs):
        line = [x for x in o.splitlines() if x.startswith("{")]
        reps.append(json.loads(line[-1]) if line else {"none": e[-300:]})
    ok_err = (errno.ETIMEDOUT, errno.ECONNRESET, errno.EPIPE, errno.ECONNREFUSED,
              errno.ECONNABORTED)
    secs = [r.get("t_err", t_kill + 99) - t_kill for r in reps]
    # CPU used between the kill and the error: a spinning wait burns ~1 s/s
    cpu = [(r.get("cpu", 0) - cpu0[i]) if cpu0.get(i) is not None else 0
           for i, r in enumerate(reps)]
    how = "killed" if sig == signal.SIGKILL else "stopped (SIGSTOP)"
    check("a rank %s mid-allreduce: the %d others raise OSError within the %d s "
          "timeout (%s)" % (how, world - 1, timeout_s, "; ".join(
              "rank %d: %s after %.1f s" % (i, r.get("msg", r), s)
              for i, (r, s) in enumerate(zip(reps, secs)))),
          started and all(r.get("errno") in ok_err for r in reps) and
          all(s <= timeout_s + 1.5 for s in secs))
    check("... without spinning while they wait (CPU %s s)" % ", ".join(
        "%.2f" % c for c in cpu), started and all(c < 0.5 * max(s, 0.5) + 0.3
                                                  for c, s in zip(cpu, secs)))


WORKER = r'''
import os, sys, numpy as np
import dlcp
g = dlcp.Group.from_env(transport=dlcp.TRANSPORT_TCP, timeout_ms=20000)
a = np.full(1000, g.rank + 1, np.float32)
g.allreduce(a, reduce=dlcp.REDUCE_SUM)
os.write(1, ("RESULT %d %d %s %s %s\n" % (  # one write: workers share stdout
    g.rank, g.world, os.environ["LOCAL_RANK"], float(a[0]),
    ",".join(g.addr(i) for i in range(g.world)))).encode())
g.close()
'''


def t_torchrun():
    try:
        import torch  # noqa: F401
    except ImportError:
        check("torchrun launcher # SKIP torch not installed", True)
        return
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "worker.py")
        with open(script, "w") as f:
            f.write(WORKER)
        env = dict(os.environ, PYTHONPATH=HERE, DLCP_ADDR="127.0.0.1",
                   PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1")
        try:
            p = subprocess.run([sys.executable, "-m", "dlcp.run", "--nproc_per_node=2",
                                "--rdzv_backend=c10d", "--rdzv_endpoint=127.0.0.1:0",
                                script], env=env, capture_output=True, text=True,
                               timeout=120)
            out, err, rc = p.stdout, p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out, err, rc = e.stdout or "", e.stderr or "", -1
    res = sorted(tuple(l.split()[1:]) for l in out.splitlines() if l.startswith("RESULT"))
    ok = rc == 0 and len(res) == 2 and [r[0] for r in res] == ["0", "1"] and \
        all(r[1] == "2" and r[3] == "3.0" for r in res) and res[0][4] == res[1][4] and \
        sorted(r[2] for r in res) == ["0", "1"]
    if not ok:
        for line in (err or "").splitlines()[-15:]:
            print("# " + line)
    check("python3 -m dlcp.run starts 2 workers that meet and all-reduce (%s)" % (
        res[0][4] if ok else "rc %s, %s" % (rc, res)), ok)
    import dlcp.run
    check("dlcp.run: this torch %s the Std.from_str fix (Python %d.%d)" % (
        "needed" if dlcp.run.needs_patch() else "did not need", *sys.version_info[:2]), True)


def t_package():
    """make install-python, dlcp-run; the old module names still import
    (pip install: test_install.sh)."""
    # make install-python: the package where this python3 imports from under
    # PREFIX, and dlcp-run running torchrun's main() with it
    with tempfile.TemporaryDirectory() as d:
        top = os.path.abspath(os.path.join(HERE, "..", ".."))
        p = subprocess.run(["make", "-s", "-C", top, "install-python", "DESTDIR=" + d,
                            "PREFIX=/usr/local", "PYTHON=" + sys.executable],
                           capture_output=True, text=True, timeout=120)
        site = subprocess.run([sys.executable, os.path.join(top, "tools", "python-site"),
                               "/usr/local"], capture_output=True, text=True).stdout.strip()
        env = dict(os.environ, PYTHONPATH=d + site,
                   DLCP_LIB=os.path.join(HERE, "..", "lib", "libdlcp.so"))
        q = subprocess.run([sys.executable, "-c", "import dlcp, dlcp.backend, dlcp.run; "
                            "print(dlcp.__file__)"], cwd=d, capture_output=True, text=True,
                           env=env)
        r = subprocess.run([os.path.join(d, "usr/local/bin/dlcp-run"), "--help"], cwd=d,
                           capture_output=True, text=True, env=env)
        ok = (p.returncode == 0 and q.returncode == 0 and q.stdout.startswith(d + site) and
              (r.returncode == 0 and "--nproc_per_node" in r.stdout or
               "No module named 'torch'" in r.stderr))
        if not ok:
            for line in (p.stderr + q.stderr + r.stderr).splitlines()[-10:]:
                print("# " + line)
        check("make install-python DESTDIR=... PREFIX=/usr/local: dlcp imports from %s, "
              "dlcp-run starts torchrun" % site, ok)
    code = ("import sys; sys.path.insert(0, %r); import dlcp, dlcp_ddp, dlcp_dear; "
            "assert dlcp_ddp is dlcp.ddp and dlcp_dear is dlcp.dear; "
            "assert dlcp_dear.DearState.__mro__[1] is dlcp_ddp.DlcpHookState" % HERE)
    q = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    check("old names dlcp_ddp, dlcp_dear are the package's modules", q.returncode == 0 or
          "No module named 'torch'" in q.stderr)


def main():
    if sys.argv[1:2] == ["child"]:
        child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        return 0
    print("TAP version 13")
    t_peer_killed()
    t_peer_killed(sig=signal.SIGSTOP)
    t_torchrun()
    t_package()
    print("1..%d" % len(results))
    print("# %d passed, %d failed" % (sum(results), len(results) - sum(results)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
