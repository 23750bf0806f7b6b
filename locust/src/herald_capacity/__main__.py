"""``python -m herald_capacity``: see :mod:`herald_capacity.cli`."""

import sys

from .cli import main

sys.exit(main())
