"""``python -m streamrepair.cli``: the command line (the form the installed hooks run)."""

import sys

from . import main

sys.exit(main())
