"""`python -m glassrag`, the same as the `glassrag` command (and `python -m glassrag.cli`).

`python -m` puts the current folder first on the import path. Run from inside an index or
corpus folder someone shared, a planted `json.py` or `numpy.py` there would be imported instead
of the library (issue 51.11), so that entry goes before anything else is imported. This
package is already imported by then: its subpackages are found through it, not the path.
"""

import os
import sys

if sys.path and os.path.realpath(sys.path[0] or os.curdir) == os.path.realpath(os.curdir):
    del sys.path[0]
sys.path[:] = [p for p in sys.path if p != ""]  # '' is the current folder too

from glassrag.cli import main  # noqa: E402

sys.exit(main())
