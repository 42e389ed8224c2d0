# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""torchrun, with fixes for Debian's torch 1.13 on Python 3.11 and for a
torch 2.x built without libuv (Debian's).

    python3 -m dlcp.run --nproc_per_node=2 train.py ...    # torchrun's options

torch 1.13's torchrun (torch.distributed.run) dies before starting any
worker on Python 3.11:

    File ".../elastic/multiprocessing/api.py", in to_map
        map[i] = val_or_map.get(i, Std.NONE)
    AttributeError: 'NoneType' object has no attribute 'get'

Std.from_str() (the parser of --redirects and --tee, whose default is "0")
looks the number up by iterating over the IntFlag Std. Since Python 3.11
iterating over a flag enum yields only its single-bit members (OUT, ERR),
not NONE (0) or ALL (3), so "0" and "3" map to None. This module replaces
Std.from_str() with one that converts the number directly (Std(int(v))),
then runs torchrun's main() with the same arguments. Where the bug is not
there (another Python or torch), nothing is replaced.

Without this module, --redirects and --tee must both be 1 or 2 (or maps
of those) to avoid the faulty path, which also changes where the
workers' output goes: use this module instead.

Since torch 2.4 a TCPStore uses the libuv server unless told otherwise,
and a torch built without libuv (Debian's 2.x) refuses such a store:
torchrun's c10d rendezvous fails before starting any worker ("use_libuv
was requested but PyTorch was build without libuv support"). On such a
torch this module makes torchrun's stores use the other server
(dlcp.rendezvous.patch_libuv(), which also sets USE_LIBUV=0 for the
workers); dlcp.backend does the same in each worker when imported, for
init_process_group() under torchrun.
"""
import re
import sys
from typing import Any, List, Optional


def _fixed_from_str(cls, vm):
    from torch.distributed.elastic.multiprocessing import api
    if re.match(api._VALUE_REGEX, vm):
        return cls(int(vm))
    if re.match(api._MAPPING_REGEX, vm):
        return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
    raise ValueError("%s does not match: <%s> or <%s>" % (
        vm, api._VALUE_REGEX, api._MAPPING_REGEX))


def needs_patch() -> bool:
    """Does this torch's Std.from_str() lose NONE/ALL (Python 3.11)?"""
    from torch.distributed.elastic.multiprocessing.api import Std
    return Std.from_str("0") is not Std.NONE or Std.from_str("3") != Std.ALL


def patch() -> bool:
    """Fix Std.from_str() in place if it is broken; True if it was."""
    from torch.distributed.elastic.multiprocessing.api import Std
    if not needs_patch():
        return False
    Std.from_str = classmethod(_fixed_from_str)  # type: ignore[assignment]  # the fix
    return True


def main(argv: Optional[List[str]] = None) -> Any:
    """torchrun with @argv (default sys.argv[1:]), Std.from_str() fixed
    and TCPStore usable without libuv."""
    patch()
    from dlcp import rendezvous
    rendezvous.patch_libuv()
    from torch.distributed.run import main as torchrun_main
    return torchrun_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
