"""`python -m glassrag`, the same as the `glassrag` command (and `python -m glassrag.cli`)."""

import sys

from glassrag.cli import main

sys.exit(main())
