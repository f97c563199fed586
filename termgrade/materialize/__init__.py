"""A dataset row back to a runnable task directory, safely.

``materialize(SOURCE, TASK_ID, to=DIR)`` reads the row (:mod:`.rows`: a parquet file, a
staged repo dir or a Hub repo id), unpacks its ``archive`` with the safe unpacker
(:mod:`.safe_tar`) into a temp dir beside DIR, checks it against the row's ``files``
manifest and renames it into place (:mod:`.materializer`).
"""

from termgrade.core.lazy import callable_package
from termgrade.materialize.materializer import MaterializeResult, materialize, unpack_row
from termgrade.materialize.rows import TaskArchiveRow, find_row
from termgrade.materialize.safe_tar import ArchiveLimits, extract_archive

__all__ = [
    "ArchiveLimits",
    "MaterializeResult",
    "TaskArchiveRow",
    "extract_archive",
    "find_row",
    "materialize",
    "unpack_row",
]

# `termgrade.materialize` is this package once it is imported: calling it calls materialize().
callable_package(__name__, "materialize")
