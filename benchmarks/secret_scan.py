"""The gated secret scan against detect-secrets' own ``scan_file``: speed and exactness.

On every text file under FOLDER (one per name and bytes, as validate scans them), it
times :func:`termgrade.validate.secrets_scan.scan_file` in this process; on a sample
(``--every N``-th file, plus every file a transformer of detect-secrets reads: YAML,
INI-like names), it runs detect-secrets' ``scan_file`` too and compares the findings
(file, line, type, hashed secret) exactly. Exit 1 when they differ.

    .venv/bin/python benchmarks/secret_scan.py /tmp/termigen/environments_harbor --every 7
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from termgrade.builders.layout import RepoPaths
from termgrade.validate.cache import ValidationCache
from termgrade.validate.secrets_check import text_file_groups

CONFIG_LIKE = (".yaml", ".yml", ".ini", ".cfg", ".conf", ".toml", ".env", ".properties")


def unique_text_files(folder: Path) -> list[Path]:
    """One file per name and bytes, as validate scans them."""
    paths = RepoPaths(folder)
    groups = text_file_groups(paths, ValidationCache(paths, enabled=False))
    return [members[0] for members in groups.values()]


def findings(scan: Any, files: list[str]) -> set[tuple[str, int, str, str]]:
    return {(s.filename, s.line_number, s.type, s.secret_hash)
            for name in files for s in scan(name)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--every", type=int, default=7, help="sample every N-th file")
    args = parser.parse_args()
    from detect_secrets.core import scan as theirs
    from detect_secrets.settings import default_settings

    from termgrade.validate import secrets_scan as ours

    files = [str(p) for p in unique_text_files(args.folder)]
    size = sum(Path(f).stat().st_size for f in files) / 1e6
    sample = [f for i, f in enumerate(files)
              if i % args.every == 0 or f.lower().endswith(CONFIG_LIKE)]
    with default_settings():
        started = time.perf_counter()
        everything = findings(ours.scan_file, files)
        seconds = time.perf_counter() - started
        print(f"gated scan: {len(files)} files, {size:.1f} MB, {seconds:.1f} s "
              f"({size / seconds:.2f} MB/s), {len(everything)} findings", flush=True)
        sample_mb = sum(Path(f).stat().st_size for f in sample) / 1e6
        started = time.perf_counter()
        ours_found = findings(ours.scan_file, sample)
        ours_s = time.perf_counter() - started
        started = time.perf_counter()
        theirs_found = findings(theirs.scan_file, sample)
        theirs_s = time.perf_counter() - started
    print(f"sample: {len(sample)} files, {sample_mb:.1f} MB: detect-secrets {theirs_s:.1f} s, "
          f"gated {ours_s:.1f} s ({theirs_s / ours_s:.0f}x)")
    same = ours_found == theirs_found
    print(f"findings: detect-secrets {len(theirs_found)}, gated {len(ours_found)}, "
          f"{'identical' if same else 'DIFFERENT'}")
    for item in sorted(ours_found ^ theirs_found)[:20]:
        print("  only in", "gated" if item in ours_found else "detect-secrets", item)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
