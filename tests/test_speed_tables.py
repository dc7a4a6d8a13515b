"""tools/speed_tables.py's 16-bit summary (the README's table): ranges and
counts from a bench JSON, checked on a small made-up run."""
import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parent.parent / "tools" / "speed_tables.py"


@pytest.fixture(scope="module")
def speed_tables():
    if not TOOL.exists():
        pytest.skip("tests run without the source tree's tools/")
    spec = importlib.util.spec_from_file_location("speed_tables", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record(function, direction, dtype, size, impl, seconds, threads=1):
    return {"function": function, "direction": direction, "dtype": dtype, "size": size, "threads": threads,
            "impl": impl, "seconds": seconds}


def test_half_summary_gives_ranges_over_both_types_and_the_counts(speed_tables):
    n = 1_000_000
    results = [
        # relu forward: float16 2 Gelem/s (torch 1), bfloat16 4 Gelem/s (torch 8); float32 1 Gelem/s
        record("relu", "forward", "float32", n, "fastact", n / 1e9),
        record("relu", "forward", "float16", n, "fastact", n / 2e9),
        record("relu", "forward", "float16", n, "torch", n / 1e9),
        record("relu", "forward", "bfloat16", n, "fastact", n / 4e9),
        record("relu", "forward", "bfloat16", n, "torch", n / 8e9),
        # tanh from the output: float16 only, 3 Gelem/s against torch's 2; no float32 row
        record("tanh", "from_output", "float16", n, "fastact", n / 3e9),
        record("tanh", "from_output", "float16", n, "torch", n / 2e9),
    ]
    text = speed_tables.half_summary({"results": results})
    lines = text.splitlines()
    assert "| relu | 2.00–4.00 | 0.50–2.00× | — | — |" in lines
    assert "| tanh (from the output) | — | — | 3.00 | 1.50× |" in lines
    # ahead of torch: relu float16 and tanh; at or above float32: both relu cells
    assert "2 of 3 cells ahead of torch; 2 of 2 at or above fastact's float32 in the same cell." in lines
