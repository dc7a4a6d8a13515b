"""Fuzz the ufunc loops against NumPy's contract for overlapping operands.

NumPy hands the inner loop out= arrays that alias an input without copying
whenever an element-by-element loop in index order gives the right answer
(out is the input, or the input runs ahead of out), and the ufunc methods
(reduce, accumulate, reduceat) feed the loop its own output as an input. The
loop must then act like that element-by-element loop, however it blocks,
gathers and splits the work across threads.

1. Every ufunc in fastact.ufuncs, on random shapes, strides, byte offsets,
   broadcasts, where= masks, out= aliasing or overlapping an input, kernel
   sets and thread splits, gives the bits it gives on contiguous copies of the
   inputs, and writes nothing outside out.
2. The binary ufuncs' methods give the bits of a Python loop that calls the
   ufunc on one element at a time in NumPy's documented order; the unary
   ufuncs' .at likewise, and their reduce-like methods raise.

Exact equality is the right check: the kernels give the same bits for an
element whatever the layout, kernel set or thread count (test_layout.py),
NaN payloads included.
"""
import contextlib
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import fastact as fa
from conftest import TESTABLE_ISAS, forced_isa, forced_threads
from fastact import ufuncs
from fastact._manifest import TIERS

# As in test_hypothesis.py: on a failure hypothesis imports libcst, whose
# DeprecationWarning filterwarnings=error would turn into an INTERNALERROR.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import hypothesis.extra._patching  # noqa: F401
    except ImportError:
        pass

# Every ufunc, by name, so that ones added later are fuzzed too. NumPy's methods
# need one output: reduce-like ones two inputs, .at one or two.
# the elementwise ufuncs (softmax's generalized ufuncs have tests of their own)
# The ufuncs with a function's default parameters (elu beside elu_with_params)
# run elu_with_params' loop with those values: test_family compares the two
# bit for bit on every layout and thread split, so only the general one is fuzzed.
def _with_params(name):  # elu_backward_accurate -> elu_backward_with_params_accurate
    base, tier = (name.removesuffix("_accurate"), "_accurate") if name.endswith("_accurate") else (name, "")
    return f"{base}_with_params{tier}"


UFUNCS = [u for u in (getattr(ufuncs, name) for name in ufuncs.__all__ if _with_params(name) not in ufuncs.__all__)
          if u.signature is None]


def has_parameters(u):
    """A parameter is a float64 input beside arrays of the loop's dtype (elu: 'ed->e')."""
    return len(set(u.types[0].split("->")[0])) > 1


# the methods' sequential references need every input of one dtype: parameters
# are fuzzed in the elementwise test only
UNARY = [u for u in UFUNCS if u.nin == 1]
BINARY = [u for u in UFUNCS if u.nin == 2 and u.nout == 1 and not has_parameters(u)]
EVERY = pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda u: u.__name__)
EVERY_AT = pytest.mark.parametrize("ufunc", [u for u in UFUNCS if u.nin <= 2 and u.nout == 1
                                              and not has_parameters(u)], ids=lambda u: u.__name__)
EVERY_UNARY = pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
EVERY_BINARY = pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)

DTYPES = [np.float16, np.float32, np.float64]
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
PAD = 16  # bytes around every buffer: room for shifted views, and for stray writes to land in

# Reproducible in CI: the same examples every run, nothing carried between runs.
# No explain phase: on a failure it reruns hundreds of variants (a minute here).
# FASTACT_FUZZ_SCALE scales the example counts, and the array lengths of the
# thread-split test: the sanitizer builds, some 3-10x slower, run the first
# quarter of the same examples.
SCALE = float(os.environ.get("FASTACT_FUZZ_SCALE", "1"))


def examples(n):
    return max(5, round(n * SCALE))


FUZZ = settings(max_examples=examples(100), deadline=None, derandomize=True, database=None,
                phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
                suppress_health_check=[HealthCheck.too_slow])
METHODS = settings(FUZZ, max_examples=examples(30))


# ---- bits and values --------------------------------------------------------------

def bits(a):
    a = np.asarray(a)
    return a.view(UINT[a.dtype.itemsize])


def is_nan(a):
    """On the bits: no floating-point flag, whatever the payload."""
    a = np.asarray(a)
    return bits(a) & ((1 << (8 * a.dtype.itemsize - 1)) - 1) > bits(np.array(np.inf, a.dtype))


def assert_same_bits(got, want, what="result"):
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), f"{what}: {got.dtype}{got.shape} " \
                                                              f"!= {want.dtype}{want.shape}"
    bad = bits(got) != bits(want)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise AssertionError(f"{what}: {int(bad.sum())} of {bad.size} differ, first at {first}: "
                             f"got {got[first]!r}, want {want[first]!r}")


def address(a):
    return a.__array_interface__["data"][0]


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


def specials(dtype):
    fi = np.finfo(dtype)
    s = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, fi.max, -fi.max, fi.smallest_normal,
         -fi.smallest_normal, fi.smallest_subnormal, -fi.smallest_subnormal, fi.eps, 1.0, -1.0,
         0.5, -0.5, 2.0, -3.0, 6.0, -6.0, 10.0, -10.0, 30.0, -30.0, 100.0, -100.0, 1e4, -1e4]
    with np.errstate(over="ignore"):  # float16 saturates the large ones to inf: fine
        return np.array([float(v) for v in s]).astype(dtype)


def values(rng, dtype, shape):
    """Normals, special values and random bit patterns (NaNs quiet: a signalling
    NaN rightly raises 'invalid', which is not the point here)."""
    dtype = np.dtype(dtype)
    n, nbits, nmant = int(np.prod(shape, dtype=np.int64)), 8 * dtype.itemsize, np.finfo(dtype).nmant
    u = UINT[dtype.itemsize]
    raw = rng.integers(0, 1 << nbits, n, dtype=np.uint64).astype(u)
    exponent = ((1 << (nbits - 1)) - 1) & ~((1 << nmant) - 1)
    nan = ((raw & exponent) == exponent) & ((raw & ((1 << nmant) - 1)) != 0)
    raw[nan] |= u(1 << (nmant - 1))
    pick = rng.random(n)
    normal = bits((rng.standard_normal(n) * 4).astype(dtype))
    special = bits(rng.choice(specials(dtype), n))
    return np.where(pick < 0.6, normal, np.where(pick < 0.8, special, raw)).view(dtype).reshape(shape)


def chain(rng, ufunc, dtype, n, wild=0.03):
    """n values for acc = f(acc, x) chains (reduce, accumulate): x picked so that
    f(1, x) keeps |acc| away from 0 and inf, so that every step shows in the
    result; a fraction `wild` anything (zeros, NaNs, infinities)."""
    pool = values(rng, dtype, 2048)
    with np.errstate(all="ignore"):
        factor = np.abs(ufunc(np.ones_like(pool), pool).astype(np.float64))
        log2 = np.log2(factor)
    ok = np.isfinite(log2)
    up, down, steady = (np.flatnonzero(ok & (log2 > 0)), np.flatnonzero(ok & (log2 < 0)),
                        np.flatnonzero(ok))
    if up.size == 0 or down.size == 0:  # e.g. relu: a factor of 0 or 1; vary acc through NaNs and zeros
        wild = max(wild, 0.01)
    out = np.empty(n, dtype)
    if n == 0:
        return out
    pick, level = rng.random(n), 0.0
    anything = rng.integers(0, pool.size, n)
    choice = {key: idx[rng.integers(0, idx.size, n)] for key, idx in
              (("up", up), ("down", down), ("steady", steady)) if idx.size}
    index = np.empty(n, np.intp)
    for i in range(n):
        if pick[i] < wild or not choice:
            j = anything[i]
        elif level > 2 and "down" in choice:
            j = choice["down"][i]
        elif level < -2 and "up" in choice:
            j = choice["up"][i]
        else:
            j = choice["steady"][i]
        index[i] = j
        if ok[j]:
            level += log2[j]
    out[:] = pool[index]
    out[0] = rng.standard_normal() * 4
    return out


# ---- layouts ----------------------------------------------------------------------

@st.composite
def layouts(draw, ndim):
    """Axis steps (negative too), an axis order, and the first byte's offset in its
    buffer (unaligned unless a multiple of the itemsize)."""
    steps = tuple(draw(st.sampled_from([1, 1, 1, 2, 3, -1, -2])) for _ in range(ndim))
    order = tuple(draw(st.permutations(range(ndim))))
    offset = draw(st.sampled_from([0, 0, 0, 8, 1, 2, 3, 4, 6]))
    return steps, order, offset


def embedded(rng, dtype, shape, layout):
    """A view of `shape` into a fresh byte buffer laid out as `layout`, the gaps
    between its elements holding other values and the bytes around it random.
    Returns (view, buffer)."""
    dtype, (steps, order, offset) = np.dtype(dtype), layout
    inner = [0] * len(shape)  # the shape before the axes are permuted into `order`
    for axis, n in zip(order, shape):
        inner[axis] = n
    full = [n * abs(s) for n, s in zip(inner, steps)]
    nbytes = int(np.prod(full, dtype=np.int64)) * dtype.itemsize
    raw = rng.integers(0, 256, PAD + offset + nbytes + PAD, dtype=np.uint8)
    whole = raw[PAD + offset:PAD + offset + nbytes].view(dtype).reshape(full)
    whole[...] = values(rng, dtype, full)
    view = whole[tuple(slice(None, None, s) for s in steps) + (...,)].transpose(order)  # 0-d: a view
    assert view.shape == tuple(shape)
    return view, raw


def at_position(view, raw, copy):
    """The bytes of `copy` (a copy of `raw`) where `view`'s elements lie in `raw`,
    as unsigned ints of its size."""
    if view.size == 0:
        return np.empty(view.shape, UINT[view.dtype.itemsize])
    return np.ndarray(view.shape, UINT[view.dtype.itemsize], buffer=copy,
                      offset=address(view) - address(raw), strides=view.strides)


@st.composite
def shapes(draw, max_dims=3, long_side=70, big=True):
    """0-3 dims: one axis up to `long_side` (every tail length of every SIMD width),
    the others short; sometimes one axis long enough for many gather blocks and, at
    the default thresholds, for a split across threads."""
    ndim = draw(st.integers(0, max_dims))
    if ndim == 0:
        return ()
    long_axis = draw(st.integers(0, ndim - 1))
    if big and draw(st.integers(0, 99)) >= 90:
        sides = [draw(st.integers(1, 2)) for _ in range(ndim)]
        sides[long_axis] = draw(st.sampled_from([129, 1025, 4099, 8203]))
    else:
        sides = [draw(st.integers(0, 4)) for _ in range(ndim)]
        sides[long_axis] = draw(st.integers(0, long_side))
    return tuple(sides)


# ---- threads and kernel sets ------------------------------------------------------

def _threshold_api(ufunc):
    """The op whose per-thread minimum fastact._ext lets tests lower, or None."""
    ext, op = fa._ext, ufunc.__name__
    for tier in TIERS:  # gelu_backward_accurate: gelu; elu_backward_with_params: elu
        op = op.removesuffix(f"_{tier}")
    op = op.removesuffix("_with_params").removesuffix("_backward")
    usable = all(hasattr(ext, a) for a in ("OPS", "thread_threshold", "set_thread_threshold"))
    return op if usable and op in ext.OPS else None


@contextlib.contextmanager
def threads(ufunc, n, per_thread=None):
    """n threads; with per_thread, the ufunc's minimum elements per thread is
    lowered (private API, skipped where absent) so that small arrays split too."""
    op = _threshold_api(ufunc) if per_thread else None
    dtypes = ("float32", "float64") if op else ()
    with forced_threads(n):
        try:
            for dt in dtypes:
                fa._ext.set_thread_threshold(op, per_thread, dt)
            yield
        finally:
            # back to the cost model (0), not to a fixed copy of its current
            # value, which would stop it learning for the tests that follow
            for dt in dtypes:
                fa._ext.set_thread_threshold(op, 0, dt)


@st.composite
def environments(draw):
    """A kernel set, 1 or 2 threads, and maybe a per-thread minimum low enough to
    split even a 70-element call (chunks are multiples of 64 elements)."""
    return (draw(st.sampled_from(TESTABLE_ISAS)), draw(st.sampled_from([1, 2])),
            draw(st.sampled_from([None, 1, 64, 300])))


@contextlib.contextmanager
def environment(ufunc, env):
    isa, n, per_thread = env
    with forced_isa(isa), threads(ufunc, n, per_thread), np.errstate(all="ignore"):
        yield


# ---- 1. elementwise calls on any layout -------------------------------------------

OUT_MODES_0D = ["none", "fresh", "same"]
OUT_MODES = OUT_MODES_0D + ["shift", "stride2", "bytes"]


@EVERY
@FUZZ
@given(data=st.data())
def test_elementwise_call_on_any_layout_gives_the_bits_of_contiguous_copies(ufunc, data):
    """out= (the first output, where there are several) is one of: none (NumPy
    allocates), a separate array, the input itself ("same"), a view of the
    input's buffer shifted by K elements along an axis (either way), every other
    element of it ("stride2": strides differ), or the input shifted by a
    fraction of an element ("bytes")."""
    draw = data.draw
    dtype = draw(st.sampled_from(DTYPES), label="dtype")
    shape = draw(shapes(), label="shape")
    nd, itemsize = len(shape), np.dtype(dtype).itemsize
    mode = draw(st.sampled_from(OUT_MODES if nd else OUT_MODES_0D), label="out")
    if mode == "bytes" and 0 in shape:
        mode = "same"
    aliased = ()  # the inputs that share out's buffer
    if mode in ("same", "shift"):
        aliased = draw(st.sampled_from([(0,), (1,), (0, 1)] if ufunc.nin == 2 else [(0,)]),
                       label="aliased inputs")
    elif mode in ("stride2", "bytes"):
        aliased = (draw(st.integers(0, ufunc.nin - 1), label="aliased input"),)
    env = draw(environments(), label="isa, threads, per-thread minimum")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))

    inputs, out, out_raw, raws = [None] * ufunc.nin, None, None, []
    if mode in ("fresh", "none"):
        if mode == "fresh":
            out, out_raw = embedded(rng, dtype, shape, draw(layouts(nd), label="out layout"))
    elif mode == "same":
        out, out_raw = embedded(rng, dtype, shape, draw(layouts(nd), label="layout"))
        for i in aliased:
            inputs[i] = out
    elif mode == "shift":
        axis = draw(st.integers(0, nd - 1), label="axis")
        k = draw(st.sampled_from([1, 2, 3, 4, 7, 8, 16, 17, 64, 65]), label="K")
        grown = list(shape)
        grown[axis] += k
        whole, out_raw = embedded(rng, dtype, grown, draw(layouts(nd), label="layout"))

        def at(p):
            return whole[(slice(None),) * axis + (slice(p, p + shape[axis]),)]
        out = at(draw(st.integers(0, k), label="out at"))
        for i in aliased:
            inputs[i] = at(draw(st.integers(0, k), label=f"input {i} at"))
    elif mode == "stride2":
        axis = draw(st.integers(0, nd - 1), label="axis")
        grown = list(shape)
        grown[axis] *= 2
        whole, out_raw = embedded(rng, dtype, grown, draw(layouts(nd), label="layout"))
        dense = whole[(slice(None),) * axis + (slice(0, shape[axis]),)]
        sparse = whole[(slice(None),) * axis + (slice(None, None, 2),)]
        out_sparse = draw(st.booleans(), label="out is the sparse one")
        out, inputs[aliased[0]] = (sparse, dense) if out_sparse else (dense, sparse)
    else:  # bytes: out overlaps every input element partly
        inputs[aliased[0]], out_raw = embedded(rng, dtype, shape, draw(layouts(nd), label="layout"))
        delta = draw(st.sampled_from([1, -1, 3, -3, itemsize + 1, -itemsize - 1]), label="byte shift")
        x = inputs[aliased[0]]
        out = np.ndarray(shape, dtype, buffer=out_raw, offset=address(x) - address(out_raw) + delta,
                         strides=x.strides)
    outs, out_raws = [], []
    if out is not None:
        outs, out_raws = [out], [out_raw]
        for o in range(1, ufunc.nout):
            extra, raw = embedded(rng, dtype, shape, draw(layouts(nd), label=f"output {o} layout"))
            outs.append(extra)
            out_raws.append(raw)
    raws += out_raws
    for i in range(ufunc.nin):
        if inputs[i] is None:  # a separate input, maybe broadcast along some axes
            broadcast = [draw(st.booleans(), label=f"input {i} broadcast along {a}") for a in range(nd)]
            own = tuple(1 if b else n for b, n in zip(broadcast, shape))
            inputs[i], raw = embedded(rng, dtype, own, draw(layouts(nd), label=f"input {i} layout"))
            raws.append(raw)
    where = None
    if outs and draw(st.booleans(), label="where="):
        mask_shape = tuple(1 if draw(st.booleans(), label="mask broadcast") else n for n in shape)
        where = rng.random(mask_shape) < draw(st.sampled_from([0.5, 0.1, 0.9]), label="mask density")

    full = np.broadcast_shapes(*(a.shape for a in inputs + outs))
    copies = [np.array(np.broadcast_to(a, full), order="C") for a in inputs]
    before = [raw.copy() for raw in raws]
    outs_before = [bits(o).copy() for o in outs]
    with forced_isa(env[0]), forced_threads(1), np.errstate(all="ignore"):
        wants = [bits(w) for w in as_tuple(ufunc(*copies))]
    if where is not None:
        wants = [np.where(np.broadcast_to(where, full), w, b) for w, b in zip(wants, outs_before)]

    kwargs = {"out": tuple(outs)} if outs else {}
    if where is not None:
        kwargs["where"] = where
    with environment(ufunc, env):
        got = as_tuple(ufunc(*inputs, **kwargs))
    for o, (g, w) in enumerate(zip(got, wants)):
        if outs:
            assert g is outs[o]
        assert_same_bits(g, w.view(dtype), f"output {o}")
    # nothing written outside out: every buffer as before but for the outputs' elements
    for raw, old in zip(raws, before):
        expected = old.copy()
        for o, out_raw in enumerate(out_raws):  # (their values are checked above)
            if raw is out_raw:
                at_position(outs[o], raw, expected)[...] = bits(got[o])
        stray = np.flatnonzero(raw != expected)
        assert stray.size == 0, f"bytes {stray[:8]} of a {raw.size}-byte buffer changed"


@EVERY
@pytest.mark.parametrize("dtype", DTYPES)
def test_out_running_behind_an_input_is_never_split_across_threads(ufunc, dtype):
    """out = buf[:-k] with the input buf[k:] reaches the loop uncopied (in index
    order every element is read before it is overwritten); a thread running a
    later chunk would overwrite elements an earlier chunk has not read yet. A
    race: long arrays (the first chunk runs while the next starts), and 4
    threads as well as 2 (more chunk boundaries, each a chance to show)."""
    api = _threshold_api(ufunc)
    # with the threshold lowered, every length gives dozens of chunks (16 at the scale of 0.25)
    n, per_thread = (round((1 << 16) * min(SCALE, 1)) + 3, 1024) if api else ((1 << 21) + 3, None)
    rng = np.random.default_rng(11)
    for k, n_threads in ((1, 2), (5, 4)):
        for step in (1, 2):  # NumPy copies reversed views first
            for shifted in range(ufunc.nin):  # which input shares out's buffer
                whole = (rng.standard_normal((n + k) * step) * 4).astype(dtype)[::step]
                out = whole[:-k]
                args = [(rng.standard_normal(n) * 4).astype(dtype) for _ in range(ufunc.nin)]
                args[shifted] = whole[k:]
                outs = (out,) + tuple(np.empty(n, dtype) for _ in range(1, ufunc.nout))
                with np.errstate(all="ignore"), forced_threads(1):
                    want = as_tuple(ufunc(*[a.copy() for a in args]))
                with np.errstate(all="ignore"), threads(ufunc, n_threads, per_thread):
                    ufunc(*args, out=outs)
                for o, w in zip(outs, want):
                    assert_same_bits(o, w, f"k={k} step={step} input {shifted} shifted")


# ---- 2. ufunc methods against element-by-element loops ----------------------------

def reference_reduce(f, x, axis, keepdims=False, initial=None, where=None):
    """acc = x[0] (or initial); acc = f(acc, x[i]) for each further i (where
    where[i]), one element per call, in index order."""
    dtype, kept = x.dtype, tuple(1 if axis is None or i == axis % x.ndim else n
                                 for i, n in enumerate(x.shape))
    if where is not None:
        where = np.broadcast_to(where, x.shape)
    if axis is None:
        x, axis = x.reshape(-1), 0
        where = None if where is None else where.reshape(-1)
    moved = np.moveaxis(x, axis, -1)
    mask = None if where is None else np.moveaxis(where, axis, -1)
    result = np.empty(moved.shape[:-1], dtype)
    for index in np.ndindex(result.shape):
        row = moved[index]
        if initial is None:
            acc, start = row[0], 1
        else:
            acc, start = dtype.type(initial), 0
        for i in range(start, row.shape[0]):
            if mask is None or mask[index][i]:
                acc = f(acc, row[i])
        result[index] = acc
    return result.reshape(kept) if keepdims else result


def reference_accumulate(f, x, axis):
    """out[0] = x[0]; out[i] = f(out[i-1], x[i]), one element per call."""
    moved = np.moveaxis(x, axis, -1)
    result = np.empty(moved.shape, x.dtype)
    for index in np.ndindex(moved.shape[:-1]):
        row = moved[index]
        if row.shape[0]:
            acc = result[index + (0,)] = row[0]
            for i in range(1, row.shape[0]):
                acc = result[index + (i,)] = f(acc, row[i])
    return np.moveaxis(result, -1, axis)


def reference_reduceat(f, x, indices, axis):
    """Per NumPy: row i is reduce(x[indices[i]:indices[i+1]]) where indices[i] <
    indices[i+1] (the last runs to the end), else x[indices[i]]."""
    moved = np.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    result = np.empty(moved.shape[:-1] + (len(indices),), x.dtype)
    for j, start in enumerate(indices):
        end = indices[j + 1] if j + 1 < len(indices) else n
        part = moved[..., start:end] if start < end else moved[..., start:start + 1]
        result[..., j] = reference_reduce(f, part, -1)
    return np.moveaxis(result, -1, axis)


def binary_chain_input(draw, rng, ufunc, dtype, shape, label="layout"):
    x, raw = embedded(rng, dtype, shape, draw(layouts(len(shape)), label=label))
    x[...] = chain(rng, ufunc, dtype, x.size).reshape(shape)
    return x, raw


@EVERY_BINARY
@METHODS
@given(data=st.data())
def test_reduce_is_the_sequential_loop(ufunc, data):
    draw = data.draw
    dtype = draw(st.sampled_from(DTYPES), label="dtype")
    shape = draw(shapes(long_side=40, big=False), label="shape")
    nd = len(shape)
    axis = draw(st.sampled_from(list(range(-nd, nd)) + ([None] if nd <= 1 else [])), label="axis")
    keepdims = draw(st.booleans(), label="keepdims")
    initial = draw(st.sampled_from([None, None, 1.0, -2.5, 0.0, np.inf, np.nan]), label="initial")
    env = draw(environments(), label="isa, threads, per-thread minimum")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    x, _ = binary_chain_input(draw, rng, ufunc, dtype, shape)
    where = None
    if initial is not None and draw(st.booleans(), label="where="):  # NumPy needs initial for where=
        where = rng.random(shape) < 0.7
    kwargs = {"axis": axis, "keepdims": keepdims}
    if initial is not None:
        kwargs["initial"] = initial
    if where is not None:
        kwargs["where"] = where
    length = x.size if axis is None else shape[axis]
    if length == 0 and initial is None:
        with pytest.raises(ValueError, match="identity"):
            ufunc.reduce(x, **kwargs)
        return
    own = axis is not None and length > 0
    out_mode = draw(st.sampled_from(["none", "fresh"] + (["own slice"] if own else [])),
                    label="out")
    copy = x.copy()
    with np.errstate(all="ignore"):
        want = reference_reduce(ufunc, copy, axis, keepdims, initial, where)
    if out_mode == "fresh":
        kwargs["out"] = embedded(rng, dtype, want.shape, draw(layouts(want.ndim), label="out layout"))[0]
    elif out_mode == "own slice":  # reduce into the input's own first slice along the axis
        kwargs["out"] = x[(slice(None),) * (axis % nd) + (slice(0, 1) if keepdims else 0, ...)]
    with environment(ufunc, env):
        got = ufunc.reduce(x, **kwargs)
    if out_mode != "none":
        assert got is kwargs["out"]
    assert_same_bits(got, want)


@EVERY_BINARY
@METHODS
@given(data=st.data())
def test_accumulate_is_the_sequential_loop(ufunc, data):
    draw = data.draw
    dtype = draw(st.sampled_from(DTYPES), label="dtype")
    shape = draw(shapes(long_side=40, big=False).filter(len), label="shape")
    nd = len(shape)
    axis = draw(st.integers(-nd, nd - 1), label="axis")
    env = draw(environments(), label="isa, threads, per-thread minimum")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    out_mode = draw(st.sampled_from(["none", "fresh", "in place", "shift"]), label="out")
    if out_mode == "shift":  # x and out views of one buffer, k apart along the axis, either way
        k = draw(st.sampled_from([1, 2, 3, 8]), label="K")
        grown = list(shape)
        grown[axis] += k
        whole, _ = binary_chain_input(draw, rng, ufunc, dtype, grown)
        behind = draw(st.booleans(), label="out behind x")
        at = [(slice(None),) * (axis % nd) + (slice(p, p + shape[axis]),) for p in (0, k)]
        x, out = (whole[at[1]], whole[at[0]]) if behind else (whole[at[0]], whole[at[1]])
    else:
        x, _ = binary_chain_input(draw, rng, ufunc, dtype, shape)
        out = {"none": None, "in place": x}.get(out_mode)
        if out_mode == "fresh":
            out = embedded(rng, dtype, shape, draw(layouts(nd), label="out layout"))[0]
    with np.errstate(all="ignore"):
        copy = x.copy()
        want = reference_accumulate(ufunc, copy, axis)
    with environment(ufunc, env):
        got = ufunc.accumulate(x, axis=axis, out=out)
    if out is not None:
        assert got is out
    assert_same_bits(got, want)


@EVERY_BINARY
@METHODS
@given(data=st.data())
def test_reduceat_is_the_sequential_loop(ufunc, data):
    draw = data.draw
    dtype = draw(st.sampled_from(DTYPES), label="dtype")
    nd = draw(st.integers(1, 2), label="ndim")
    shape = tuple(draw(st.integers(1, 30 if i == 0 else 4), label="side") for i in range(nd))
    axis = draw(st.integers(-nd, nd - 1), label="axis")
    n = shape[axis]
    indices = draw(st.lists(st.integers(0, n - 1), max_size=8), label="indices")
    env = draw(environments(), label="isa, threads, per-thread minimum")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    x, _ = binary_chain_input(draw, rng, ufunc, dtype, shape)
    with np.errstate(all="ignore"):
        want = reference_reduceat(ufunc, x.copy(), indices, axis)
    out = None
    if draw(st.booleans(), label="out="):
        out = embedded(rng, dtype, want.shape, draw(layouts(nd), label="out layout"))[0]
    with environment(ufunc, env):
        got = ufunc.reduceat(x, np.array(indices, np.intp), axis=axis, out=out)
    assert_same_bits(got, want)


@EVERY_BINARY
@METHODS
@given(data=st.data())
def test_outer_is_every_pair(ufunc, data):
    draw = data.draw
    dtype = draw(st.sampled_from(DTYPES), label="dtype")
    env = draw(environments(), label="isa, threads, per-thread minimum")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    a_shape = draw(shapes(max_dims=2, long_side=9, big=False), label="a shape")
    b_shape = draw(shapes(max_dims=2, long_side=9, big=False), label="b shape")
    a, _ = embedded(rng, dtype, a_shape, draw(layouts(len(a_shape)), label="a layout"))
    b, _ = embedded(rng, dtype, b_shape, draw(layouts(len(b_shape)), label="b layout"))
    want = np.empty(a_shape + b_shape, dtype)
    with np.errstate(all="ignore"):
        for i in np.ndindex(a_shape):
            for j in np.ndindex(b_shape):
                want[i + j] = ufunc(a[i], b[j])
    out = None
    if draw(st.booleans(), label="out="):
        out = embedded(rng, dtype, want.shape, draw(layouts(want.ndim), label="out layout"))[0]
    with environment(ufunc, env):
        got = ufunc.outer(a, b, out=out)
    assert_same_bits(got, want)


@st.composite
def at_cases(draw, ufunc):
    """An array (1-D or 2-D, any layout), indices along its first axis with
    repeats and negatives, and for binary ufuncs the second operand: a scalar,
    one row broadcast to every index, or one row per index."""
    dtype = draw(st.sampled_from(DTYPES), label="dtype")
    shape = (draw(st.integers(1, 30), label="rows"),) + draw(st.sampled_from([(), (1,), (3,), (9,)]),
                                                             label="row shape")
    rows = shape[0]
    indices = draw(st.lists(st.integers(-rows, rows - 1), max_size=40), label="indices")
    kind = draw(st.sampled_from(["scalar", "broadcast", "per index"]), label="b")
    return dtype, shape, indices, kind, draw(environments(), label="isa, threads, per-thread minimum")


@EVERY_AT
@METHODS
@given(data=st.data())
def test_at_applies_each_index_in_turn(ufunc, data):
    """a[i] = f(a[i], b[k]) (binary) or f(a[i]) (unary) for each index in order,
    repeated indices applied again."""
    dtype, shape, indices, kind, env = data.draw(at_cases(ufunc))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    a, raw = embedded(rng, dtype, shape, data.draw(layouts(len(shape)), label="layout"))
    b = {"scalar": lambda: values(rng, dtype, ())[()],
         "broadcast": lambda: values(rng, dtype, (1,) + shape[1:]),
         "per index": lambda: values(rng, dtype, (len(indices),) + shape[1:])}[kind]()
    args = (b,) if ufunc.nin == 2 else ()
    want, before = a.copy(), raw.copy()
    with np.errstate(all="ignore"):
        for k, i in enumerate(indices):
            for j in np.ndindex(shape[1:]):
                e = (i,) + j
                if ufunc.nin == 1:
                    want[e] = ufunc(want[e])
                else:
                    bk = b if kind == "scalar" else b[(0 if kind == "broadcast" else k,) + j]
                    want[e] = ufunc(want[e], bk)
    with environment(ufunc, env):
        ufunc.at(a, np.array(indices, np.intp), *args)
    assert_same_bits(a, want)
    at_position(a, raw, before)[...] = bits(a)
    assert np.array_equal(raw, before), "at() wrote outside the array"


@EVERY_UNARY
@pytest.mark.parametrize("method", ["reduce", "accumulate", "reduceat", "outer"])
def test_unary_ufuncs_have_no_reductions(ufunc, method):
    x = np.linspace(-2, 2, 5)
    args = {"reduce": (x,), "accumulate": (x,), "reduceat": (x, [0, 2]), "outer": (x, x)}[method]
    with pytest.raises(ValueError, match="binary"):
        getattr(ufunc, method)(*args)


# ---- large reductions, where the old loop split the chain across threads ----------

def sequential_accumulate_1d(f, x):
    """The element-by-element accumulate of a long 1-D array; each call on
    1-element slices that do not overlap (~3 us an element)."""
    out = np.empty(x.size, x.dtype)
    out[:1] = x[:1]
    for i in range(1, x.size):
        f(out[i - 1:i], x[i:i + 1], out=out[i:i + 1])
    return out


def rowwise_accumulate(f, x, axis):
    """accumulate along `axis`, one step at a time, each step vectorised over the
    other axes: the same sequence of elementwise calls, far fewer of them."""
    moved = np.moveaxis(x, axis, 0)
    out = np.empty(moved.shape, x.dtype)
    out[0] = moved[0]
    for i in range(1, moved.shape[0]):
        out[i] = f(out[i - 1], moved[i])
    return np.moveaxis(out, 0, axis)


@EVERY_BINARY
def test_long_reduce_and_accumulate_with_threads(ufunc):
    """2^16 elements (1-D) and 2 x 2^13 (2-D), 2 threads, per-thread minimum
    lowered: large enough that a loop which split an accumulator's chain across
    threads, or read ahead of its own writes, would show."""
    rng = np.random.default_rng(BINARY.index(ufunc))
    dtype = DTYPES[BINARY.index(ufunc) % len(DTYPES)]
    n = (1 << 16) + 7
    whole = np.empty(2 * n, dtype)
    x = whole[::-2]  # strided, backwards: the gather path
    x[...] = chain(rng, ufunc, dtype, n, wild=0.0005)
    with np.errstate(all="ignore"), forced_threads(1):
        want = sequential_accumulate_1d(ufunc, x.copy())
    with np.errstate(all="ignore"), threads(ufunc, 2, per_thread=1024):
        assert_same_bits(ufunc.accumulate(x), want, "accumulate")
        contiguous = np.ascontiguousarray(x)  # the direct kernel path
        assert_same_bits(ufunc.accumulate(contiguous), want, "accumulate, contiguous")
        out = np.full(n, np.nan, dtype)
        ufunc.accumulate(contiguous, out=out)
        assert_same_bits(out, want, "accumulate into NaNs")
        ufunc.accumulate(contiguous, out=contiguous)
        assert_same_bits(contiguous, want, "accumulate in place")
        assert_same_bits(ufunc.reduce(x), want[-1], "reduce")
        assert_same_bits(ufunc.reduce(np.ascontiguousarray(x[1:]), initial=x[0]), want[-1],
                         "reduce with initial")

    x2 = chain(rng, ufunc, dtype, 2 * (1 << 13) + 6, wild=0.0005).reshape(2, -1)
    for y in (x2, np.asfortranarray(x2), x2[:, ::-1]):
        for axis in (0, 1):
            with np.errstate(all="ignore"), forced_threads(1):
                want = rowwise_accumulate(ufunc, y.copy(), axis)
            with np.errstate(all="ignore"), threads(ufunc, 2, per_thread=1024):
                assert_same_bits(ufunc.accumulate(y, axis=axis), want, f"accumulate, axis {axis}")
                assert_same_bits(ufunc.reduce(y, axis=axis), want.take(-1, axis), f"reduce, axis {axis}")


def test_a_nan_pair_gives_the_same_nan_everywhere():
    """With both inputs NaN the result is x's NaN on every ISA, in full vectors
    and tails alike (g = +NaN, x = -NaN: the sign shows which came out)."""
    differ = []
    for ufunc in BINARY:
        for dtype in DTYPES:
            nan = np.array(np.nan, dtype)
            g, x = np.full(67, nan), np.full(67, -nan)
            seen = {}
            for isa in TESTABLE_ISAS:
                with forced_isa(isa):
                    got = np.concatenate([ufunc(g, x), ufunc(g[:1], x[:1])])
                seen[isa] = {hex(b) for b in bits(got).tolist()}
            if len(set().union(*seen.values())) > 1:
                differ.append(f"{ufunc.__name__} {np.dtype(dtype)}: {seen}")
    assert not differ, "\n".join(differ)
