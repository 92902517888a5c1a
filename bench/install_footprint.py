"""Install footprint of the core package: what ``pip install agenteval-otel`` brings, no extras.

    python bench/install_footprint.py [--python PYTHON] [--find-links DIR [--no-index]] [--list]
    python bench/install_footprint.py --project OTHER_CHECKOUT   # e.g. an older commit, to compare

Creates a fresh virtual environment in a temporary directory (``PYTHON -m venv``, this
interpreter by default), installs the project there with no extras and no cache (``pip install
--no-cache-dir PROJECT``; ``--find-links``/``--no-index`` install from a local directory of
wheels instead of the package index), then counts the installed distributions, pip, setuptools
and wheel left out (they come with the environment), and sums their size on disk: every file in
site-packages, the bytecode pip compiles at install included, minus the files of the ones left
out (sizes in MB, 10^6 bytes).

Each figure is printed beside the core's before ROUGE, NLTK, gRPC and the OTLP/HTTP exporter
left it (measured the same way with Python 3.11: 41 distributions, 148.9 MB) and beside its target, half of the 43
distributions and 179 MB first counted for that core (pip and setuptools included): at most 21
distributions and 89 MB. The exit status is 1 when one is missed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from _targets import Targets

REPO = Path(__file__).resolve().parent.parent
BEFORE = (41, 148.9)
"""Distributions and MB of the core install before ROUGE, NLTK, gRPC and the OTLP/HTTP exporter
left it (Python 3.11)."""
TARGET_DISTRIBUTIONS = 21
TARGET_MB = 89.0
LEFT_OUT = frozenset({"pip", "setuptools", "wheel"})

# Run by the new environment's interpreter: every distribution in its site-packages with the
# bytes of its files, and the bytes of every file there.
_MEASURE = """
import json, os, sys, sysconfig
from importlib import metadata
roots = sorted({os.path.realpath(sysconfig.get_path(k)) for k in ("purelib", "platlib")})
def size(path):
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0
total = sum(size(os.path.join(d, f)) for root in roots for d, _, fs in os.walk(root) for f in fs)
dists = {}
for dist in metadata.distributions(path=roots):
    files = {os.path.realpath(dist.locate_file(f)) for f in dist.files or ()}
    dists[dist.metadata["Name"]] = sum(size(f) for f in files if f.startswith(tuple(roots)))
print(json.dumps({"total": total, "dists": dists}))
"""


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def measure(python: str, project: Path, pip_options: Sequence[str]) -> tuple[dict[str, int], int, float]:
    """Install ``project`` into a fresh environment of ``python``: the size of each distribution
    (the left-out ones included), the bytes of its site-packages, and the seconds the install took."""
    with tempfile.TemporaryDirectory(prefix="agenteval-footprint-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        env_python = str(venv / "bin" / "python")
        started = time.monotonic()
        subprocess.run([env_python, "-m", "pip", "install", "--quiet", "--no-cache-dir",
                        "--disable-pip-version-check", *pip_options, str(project)], check=True)
        seconds = time.monotonic() - started
        done = subprocess.run([env_python, "-c", _MEASURE], check=True, capture_output=True, text=True)
    found = json.loads(done.stdout)
    return {_canonical(k): v for k, v in found["dists"].items()}, found["total"], seconds


def report(dists: dict[str, int], total: int, listing: bool) -> int:
    """Print the figures beside their targets; the exit status (1: a target missed)."""
    kept = {name: size for name, size in dists.items() if name not in LEFT_OUT}
    left_out = sum(size for name, size in dists.items() if name in LEFT_OUT)
    count, mb = len(kept), (total - left_out) / 1e6
    if listing:
        for name, size in sorted(kept.items(), key=lambda item: -item[1]):
            print(f"  {name:<44}{size / 1e6:>8.2f} MB")
    targets = Targets("install_footprint")
    distributions = targets.figure("distributions", count, digits=0, at_most=TARGET_DISTRIBUTIONS)
    size = targets.figure("MB on disk", mb, digits=1, at_most=TARGET_MB)
    print(f"{'':<16}{'installed':>10}{'before':>9}{'ratio':>8}  target")
    print(f"{'distributions':<16}{count:>10}{BEFORE[0]:>9}{count / BEFORE[0]:>8.2f}  {distributions.verdict}")
    print(f"{'MB on disk':<16}{mb:>10.1f}{BEFORE[1]:>9.1f}{mb / BEFORE[1]:>8.2f}  {size.verdict}")
    print("pip, setuptools and wheel left out")
    return targets.finish()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the new environment "
                                                                 "(default: this one)")
    parser.add_argument("--project", type=Path, default=REPO, help="the checkout to install (default: this one)")
    parser.add_argument("--find-links", metavar="DIR", help="also look for wheels in DIR")
    parser.add_argument("--no-index", action="store_true", help="install from --find-links only")
    parser.add_argument("--list", action="store_true", help="list every distribution with its size")
    args = parser.parse_args(argv)
    pip_options = [*(["--find-links", args.find_links] if args.find_links else []),
                   *(["--no-index"] if args.no_index else [])]
    dists, total, seconds = measure(args.python, args.project.resolve(), pip_options)
    version = subprocess.run([args.python, "-c", "import platform; print(platform.python_version())"],
                             check=True, capture_output=True, text=True).stdout.strip()
    print(f"pip install {args.project} (no extras) into a fresh Python {version} environment: {seconds:.0f} s")
    return report(dists, total, args.list)


if __name__ == "__main__":
    sys.exit(main())
