"""`python -m langmem_plus.cli`: the `langmem-plus` command."""

import sys

from langmem_plus.cli.run import main

sys.exit(main())
