"""`python -m bot` is the `folio` command."""

import sys

from bot.cli import main

sys.exit(main())
