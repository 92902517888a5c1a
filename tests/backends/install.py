"""Install the real trace backends some tests run against, each in a virtual environment of its
own: ``python tests/backends/install.py phoenix`` creates ``.venvs/phoenix`` at the repository's
root (or under ``$AGENTEVAL_BACKEND_VENVS``) with the pins of ``tests/backends/phoenix.txt``. A
virtual environment already installed from the same pins is left as it is; one installed from
other pins is made again."""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENVS_ENV = "AGENTEVAL_BACKEND_VENVS"
"""Where the backends' virtual environments go, when not in ``.venvs`` at the repository's root."""
STAMP = "installed-from.sha256"
"""The file in a virtual environment that holds the digest of the pins it was installed from."""


def venvs_dir() -> Path:
    """``$AGENTEVAL_BACKEND_VENVS`` when set, else ``.venvs`` at the repository's root."""
    configured = os.environ.get(VENVS_ENV)
    return Path(configured).expanduser().resolve() if configured else HERE.parents[1] / ".venvs"


def backend_names() -> list[str]:
    """The backends that have a pinned requirements file here (``NAME.txt``)."""
    return sorted(path.stem for path in HERE.glob("*.txt"))


def pins_digest(name: str) -> str:
    """The digest of a backend's requirements file."""
    return hashlib.sha256((HERE / f"{name}.txt").read_bytes()).hexdigest()


def install(name: str) -> Path:
    """``.venvs/NAME`` with the pins of ``NAME.txt`` installed (made again if its pins changed)."""
    target = venvs_dir() / name
    digest = pins_digest(name)
    stamp = target / STAMP
    if stamp.is_file() and stamp.read_text().strip() == digest:
        print(f"{name}: {target} is installed from {name}.txt already")
        return target
    print(f"{name}: installing {HERE / f'{name}.txt'} into {target}", flush=True)
    venv.EnvBuilder(clear=True, with_pip=True).create(target)
    subprocess.run([str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "-r", str(HERE / f"{name}.txt")], check=True)
    stamp.write_text(digest + "\n")
    return target


def main(argv: list[str] | None = None) -> int:
    """Install each backend named on the command line."""
    known = backend_names()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("names", nargs="+", metavar="NAME", help=f"a backend to install: {', '.join(known)}")
    args = parser.parse_args(argv)
    unknown = [name for name in args.names if name not in known]
    if unknown:
        parser.error(f"unknown backend {', '.join(unknown)}; expected one of {', '.join(known)}")
    for name in args.names:
        try:
            install(name)
        except subprocess.CalledProcessError as exc:
            print(f"{name}: pip failed (exit {exc.returncode}); see its output above", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
