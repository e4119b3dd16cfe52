"""``python -m ginenv.experiments.cli``: the ``ginenv`` command."""

import sys

from ginenv.experiments.cli import main

sys.exit(main())
