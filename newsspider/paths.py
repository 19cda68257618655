"""Where a path setting points: relative paths are under the project (scrapy.cfg's folder)."""

from __future__ import annotations

from pathlib import Path

from scrapy.utils.conf import closest_scrapy_cfg

__all__ = ["project_dir", "project_path"]


def project_dir() -> Path:
    """The folder of the nearest ``scrapy.cfg`` (the project), else the working folder."""
    cfg = closest_scrapy_cfg()
    return Path(cfg).resolve().parent if cfg else Path.cwd()


def project_path(value: str) -> Path:
    """A path setting: relative paths are relative to the project (scrapy.cfg's folder)."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    return project_dir() / path
