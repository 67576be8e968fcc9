"""`langmem-plus`: the command line, a thin shell over `Memory`.

Readable tables by default (aligned by display width, so Chinese text lines up), ``--json``
for machines — errors included; progress bars go to stderr; exit codes: 0 ok, 1 not found,
2 usage or validation error, 3 anything else (one line on stderr).

The database is ``--db``, else ``LANGMEM_PLUS_DB``, else ``memory.db`` in the platform's user
data directory (platformdirs), so every command finds the same memories from any working
directory; ``langmem-plus where`` prints which file that is.

The package: `run` (main and exit codes), `parser`, `commands_*` (one module per group of
commands), `options` (reading the values given), `output` (tables, JSON, errors, progress).
"""

from langmem_plus.cli.options import default_db_path, is_loopback, parse_span, quiet_jieba
from langmem_plus.cli.output import Progress, display_width
from langmem_plus.cli.parser import build_parser
from langmem_plus.cli.run import main

__all__ = [
    "Progress",
    "build_parser",
    "default_db_path",
    "display_width",
    "is_loopback",
    "main",
    "parse_span",
    "quiet_jieba",
]
