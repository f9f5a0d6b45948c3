"""Shared helpers of the Python tests: the repository root (for models/ and examples/)."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def root() -> pathlib.Path:
    return ROOT
