"""Shared fixtures: where ../shared/datasets is, skipping cleanly when absent."""

from pathlib import Path

import pytest

pytest_plugins = ["tests.pgserver"]

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
DATASETS = SHARED / "datasets"


@pytest.fixture(scope="session")
def datasets() -> Path:
    if not (DATASETS / "README.md").is_file():
        pytest.skip("../shared/datasets is not beside the repository")
    return DATASETS
