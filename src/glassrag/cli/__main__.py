"""`python -m glassrag.cli`, the same as the `glassrag` command."""

import sys

from glassrag.cli import main

sys.exit(main())
