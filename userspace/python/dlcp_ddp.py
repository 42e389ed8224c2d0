# SPDX-License-Identifier: GPL-2.0
"""Old name of dlcp.ddp (kept for existing scripts): the same module."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dlcp.ddp  # noqa: E402

sys.modules[__name__] = dlcp.ddp
