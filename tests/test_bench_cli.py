"""python -m fastact bench as a user sees it: a table in 100 columns (every
peer with --wide), the kernel set chosen with --isa, --plot drawing its file,
and words about the measurements only. Timings are never judged."""
import re

import pytest

import fastact as fa
from fastact import _bench

SMALL = ["--functions", "relu,gelu", "--sizes", "1e3", "--threads", "1", "--repeat", "1",
         "--sample-time", "1e-5", "--impls", "fastact,fastact-accurate,numpy"]


@pytest.fixture
def restore_isa():
    previous = fa.isa()
    yield
    fa.set_isa(previous)


def run(capsys, *extra):
    assert _bench.main(SMALL + list(extra)) == 0
    return capsys.readouterr().out


def test_compact_table_fits_100_columns(capsys):
    out = run(capsys)
    assert "| function | dir | dtype | size | thr | fastact | accurate | fastest peer |" in out
    # a row: fastact's two tiers, the fastest peer (numpy: the only one timed) and the two ratios
    assert re.search(r"\| gelu \| fwd \| float32 \| 1e3 \| 1 \| [0-9.]+ \| [0-9.]+ \| numpy [0-9.]+ \| "
                     r"[0-9.]+× \| [0-9.]+× \|", out), out
    too_wide = [line for line in out.splitlines() if len(line) > 100]
    assert not too_wide, too_wide


def test_wide_table_has_a_column_per_implementation(capsys):
    out = run(capsys, "--wide")
    assert "| function | direction | dtype | size | threads | fastact | fastact-accurate | numpy |" in out


def test_from_output_rows_time_sigmoid_and_tanh_only(capsys):
    """The derivative from the forward's output: fastact's *_backward_from_output
    against NumPy's formula on the same saved output; no such row for relu."""
    out = run(capsys, "--functions", "relu,sigmoid,tanh", "--directions", "from_output")
    rows = [line for line in out.splitlines() if "| from y |" in line]
    assert [line.split("|")[1].strip() for line in rows] == ["sigmoid", "tanh"], out
    for line in rows:
        # fastact's one tier (the accurate one has no such function), numpy, the ratio
        assert re.search(r"\| from y \| float32 \| 1e3 \| 1 \| [0-9.]+ \| numpy [0-9.]+ \| [0-9.]+× \|$", line), line


def test_isa_picks_the_kernel_set(capsys, restore_isa):
    out = run(capsys, "--isa", "scalar")
    assert "ISA scalar" in out


def test_unknown_isa_is_refused(capsys):
    with pytest.raises(SystemExit):
        _bench.main(SMALL + ["--isa", "neon-9000"])
    assert "invalid choice" in capsys.readouterr().err


def test_plot_writes_its_file(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "throughput.png"
    run(capsys, "--plot", str(path))
    assert path.stat().st_size > 1000


def test_help_describes_the_options(capsys):
    with pytest.raises(SystemExit):
        _bench.main(["--help"])
    out = capsys.readouterr().out
    for option in ("--isa", "--wide", "--plot PATH", "--json PATH", "--dtypes", "--threads"):
        assert option in out
