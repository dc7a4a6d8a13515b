"""Bigger than one machine: fastact on chunked Dask arrays, locally and on a
dask.distributed cluster of worker processes (the README's example), and
the labelled arrays of xarray and pandas, which keep their labels."""
import os

import numpy as np
import pytest

import fastact as fa

da = pytest.importorskip("dask.array")


def data():
    return np.random.default_rng(0).standard_normal((1000, 512)).astype(np.float32)


def test_dask_array_is_lazy_and_bit_identical():
    x = data()
    lazy = fa.gelu(da.from_array(x, chunks=(250, 512)))
    assert isinstance(lazy, da.Array)
    np.testing.assert_array_equal(lazy.compute(scheduler="threads"), fa.gelu(x))
    back = fa.gelu_backward(da.ones_like(lazy), da.from_array(x, chunks=(100, 256)))
    np.testing.assert_array_equal(back.compute(scheduler="threads"), fa.gelu_backward(np.ones_like(x), x))


def worker_facts():
    return fa.get_num_threads(), fa._ext.num_threads_source(), os.getpid()


def test_local_cluster_of_two_processes():
    """The same code as on a real cluster: two worker processes, results equal
    bit for bit to the in-process ones, and fastact in each worker keeping to
    the one thread per task Dask's workers ask of native libraries
    (OMP_NUM_THREADS=1), however many tasks a worker runs at once."""
    distributed = pytest.importorskip("distributed")
    import dask
    x = data()
    # Dask's default for its workers (distributed.nanny.pre-spawn-environ), set here explicitly
    with dask.config.set({"distributed.nanny.pre-spawn-environ.OMP_NUM_THREADS": 1}), distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        chunks = da.from_array(x, chunks=(125, 512))
        got = client.compute(fa.silu(chunks)).result()
        facts = client.run(worker_facts)
    np.testing.assert_array_equal(got, fa.silu(x))
    assert len(facts) == 2 and len({pid for _, _, pid in facts.values()}) == 2
    assert os.getpid() not in {pid for _, _, pid in facts.values()}
    for threads, source, _ in facts.values():
        assert threads == 1 and "OMP_NUM_THREADS" in source, (threads, source)


def test_xarray_keeps_dims_and_coords():
    xr = pytest.importorskip("xarray")
    x = data()[:3, :4]
    labelled = xr.DataArray(x, dims=("time", "feature"), coords={"time": [10, 20, 30]})
    y = fa.gelu(labelled)
    assert isinstance(y, xr.DataArray) and y.dims == ("time", "feature")
    assert list(y.coords["time"].values) == [10, 20, 30]
    np.testing.assert_array_equal(y.values, fa.gelu(x))


def test_pandas_keeps_the_index():
    pd = pytest.importorskip("pandas")
    series = pd.Series(data()[0, :4], index=list("abcd"))
    y = fa.silu(series)
    assert isinstance(y, pd.Series) and list(y.index) == list("abcd")
    np.testing.assert_array_equal(y.to_numpy(), fa.silu(series.to_numpy()))
    frame = pd.DataFrame(data()[:5, :3], columns=["p", "q", "r"])
    z = fa.relu(frame)
    assert isinstance(z, pd.DataFrame) and list(z.columns) == ["p", "q", "r"]
