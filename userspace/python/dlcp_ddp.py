# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""Old name of dlcp.ddp (kept for existing scripts): the same module."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dlcp.ddp  # noqa: E402

sys.modules[__name__] = dlcp.ddp
