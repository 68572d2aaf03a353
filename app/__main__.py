"""``python -m app`` is the ``kafka-purge`` command."""

import sys

from app.cli.main import main

sys.exit(main())
