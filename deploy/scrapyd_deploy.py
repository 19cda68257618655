#!/usr/bin/env python3
"""Deploy newsspider to a Scrapyd server without writing into the checkout.

``scrapyd-deploy`` builds its egg in the folder of ``scrapy.cfg``: it writes a
``setup.py`` there when there is none (and leaves it behind), and setuptools adds
``build/`` and ``project.egg-info/``. This repository's top level is fixed
(``scrapy.cfg``, ``newsspider/``, ``tests/``, ``requirements.txt``, ``README.md``,
``data/``), so this script copies ``scrapy.cfg``, ``requirements.txt`` and the
``newsspider`` package into a temporary folder and runs ``scrapyd-deploy`` there.

Every argument goes to ``scrapyd-deploy`` unchanged, except ``--url URL``, which
deploys to that server (the copy's ``[deploy]`` section gets it as its ``url``)::

    python deploy/scrapyd_deploy.py                      # the [deploy] url of scrapy.cfg
    python deploy/scrapyd_deploy.py --url http://127.0.0.1:6800/ -v 20250301
    python deploy/scrapyd_deploy.py --build-egg newsspider.egg

The exit status is ``scrapyd-deploy``'s.
"""

from __future__ import annotations

import argparse
import configparser
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Options of scrapyd-deploy whose value is a file, relative to the caller's folder.
PATH_OPTIONS = ("--build-egg", "--egg")


def copy_project(dest: Path) -> None:
    """``scrapy.cfg``, ``requirements.txt`` and ``newsspider/`` (no caches) into ``dest``."""
    for name in ("scrapy.cfg", "requirements.txt"):
        shutil.copy2(REPO / name, dest / name)
    shutil.copytree(
        REPO / "newsspider",
        dest / "newsspider",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )


#: The egg's setup.py: scrapyd-deploy's own leaves package data out, and the project reads
#: its built-in site table (newsspider/sites.toml) from the package.
SETUP_PY = """\
from setuptools import find_packages, setup

setup(
    name="newsspider",
    version="1.0",
    packages=find_packages(),
    package_data={"newsspider": ["sites.toml"]},
    entry_points={"scrapy": ["settings = newsspider.settings"]},
)
"""


def set_url(cfg_path: Path, url: str) -> None:
    """Make ``url`` the default target's URL in the copy of ``scrapy.cfg``."""
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(cfg_path, encoding="utf-8")
    if not cfg.has_section("deploy"):
        cfg.add_section("deploy")
    cfg.set("deploy", "url", url)
    cfg.set("deploy", "project", cfg.get("deploy", "project", fallback="newsspider"))
    with open(cfg_path, "w", encoding="utf-8") as f:
        cfg.write(f)


def absolute_paths(args: list[str], cwd: Path) -> list[str]:
    """Make the values of ``--build-egg``/``--egg`` absolute: the tool runs elsewhere."""
    out: list[str] = []
    pending = False
    for arg in args:
        if pending:
            out.append(str((cwd / arg).resolve()))
            pending = False
        elif arg in PATH_OPTIONS:
            out.append(arg)
            pending = True
        elif arg.startswith(tuple(f"{o}=" for o in PATH_OPTIONS)):
            name, value = arg.split("=", 1)
            out.append(f"{name}={(cwd / value).resolve()}")
        else:
            out.append(arg)
    return out


def scrapyd_deploy_command() -> list[str]:
    """The ``scrapyd-deploy`` of this Python's environment."""
    beside = Path(sys.executable).with_name("scrapyd-deploy")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("scrapyd-deploy")
    return [found] if found else [sys.executable, "-m", "scrapyd_client.deploy"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], add_help=False)
    parser.add_argument("--url", help="Scrapyd server to deploy to")
    parser.add_argument("-h", "--help", action="store_true")
    opts, rest = parser.parse_known_args(argv)
    if opts.help:
        print(__doc__)  # noqa: T201
        return 0
    with tempfile.TemporaryDirectory(prefix="newsspider-deploy-") as tmp:
        work = Path(tmp)
        copy_project(work)
        (work / "setup.py").write_text(SETUP_PY, encoding="utf-8")
        if opts.url:
            set_url(work / "scrapy.cfg", opts.url)
        env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
        cmd = [*scrapyd_deploy_command(), *absolute_paths(rest, Path.cwd())]
        return subprocess.run(cmd, cwd=work, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
