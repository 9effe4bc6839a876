"""The table of attributes a tensor reads as a NumPy array does is the derivation's (TFG101's fix uses it)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tflint_gpu.semantic import ndarray_attributes

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="TensorFlow is not installed")
def test_the_table_is_what_the_derivation_prints_under_tensorflow():
    derived = subprocess.run([sys.executable, str(ROOT / "scripts" / "derive_ndarray_attributes.py")],
                             capture_output=True, text=True, check=True, timeout=600,
                             env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="-1")).stdout
    found = {}
    exec(compile(derived, "derived", "exec"), found)
    for name in ("SHARED", "DIFFERENT", "NUMPY_ONLY"):
        assert found[name] == getattr(ndarray_attributes, name), name


def test_the_table_reads_as_measured():
    # The conversions TFG101 dropped on real code: each read is NumPy's alone.
    assert {"tolist", "item", "clip", "mean", "ravel", "T"} <= ndarray_attributes.NUMPY_ONLY
    assert "device" in ndarray_attributes.DIFFERENT  # 'cpu' on an array, '/job:localhost/...' on a tensor
    assert ndarray_attributes.SHARED == {"shape", "ndim", "dtype"}
    assert not ndarray_attributes.SHARED & (ndarray_attributes.NUMPY_ONLY | ndarray_attributes.DIFFERENT)
