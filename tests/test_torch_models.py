"""replace_activations on other libraries' activation classes: the ones of
transformers and timm that compute a fastact function are swapped after a
probe agrees, the others are reported and left alone. Stand-ins with the
real qualified names run everywhere; real transformers models (built from
configs, random weights, nothing downloaded) run where transformers is
installed."""
import math

import numpy as np
import pytest

import fastact as fa

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import fastact.torch as fat  # noqa: E402


def stand_in(qualname, forward, module="transformers.activations", **attrs):
    """A module class named as another library's, computing `forward`."""
    namespace = {"forward": lambda self, x: forward(x), "__module__": module, "__qualname__": qualname}
    cls = type(qualname, (torch.nn.Module,), namespace)
    instance = cls()
    instance.__dict__.update(attrs)
    return instance


def new_gelu(x):  # GPT-2's formula, as transformers writes it
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def block(activation, dtype=torch.float32):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), activation, torch.nn.Linear(16, 4)).to(dtype).eval()


@pytest.mark.parametrize("qualname, module, forward, expected, approximate", [
    ("GELUActivation", "transformers.activations", F.gelu, fat.GELU, "none"),
    ("NewGELUActivation", "transformers.activations", new_gelu, fat.GELU, "tanh"),
    ("GELUTanh", "transformers.activations", lambda x: F.gelu(x, approximate="tanh"), fat.GELU, "tanh"),
    ("FastGELUActivation", "transformers.activations",
     lambda x: 0.5 * x * (1.0 + torch.tanh(x * 0.7978845608 * (1.0 + 0.044715 * x * x))), fat.GELU, "tanh"),
    ("SiLUActivation", "transformers.activations", F.silu, fat.SiLU, None),
    ("QuickGELUActivation", "transformers.activations", lambda x: x * torch.sigmoid(1.702 * x), fat.QuickGELU,
     None),
    ("MishActivation", "transformers.activations", F.mish, fat.Mish, None),
    ("GELU", "timm.layers.activations", F.gelu, fat.GELU, "none"),
    ("Swish", "timm.layers.activations", lambda x: x * torch.sigmoid(x), fat.SiLU, None),
    ("QuickGELU", "timm.layers.activations", lambda x: x * torch.sigmoid(1.702 * x), fat.QuickGELU, None),
    ("HardSwishMe", "timm.layers.activations_me", F.hardswish, fat.Hardswish, None),
])
def test_foreign_activation_swapped_after_its_probe(qualname, module, forward, expected, approximate):
    model = block(stand_in(qualname, forward, module))
    x = torch.randn(32, 8) * 3
    with torch.no_grad():
        before = model(x)
    result = fat.replace_activations(model)
    assert dict(result) == {"1": qualname} and result.skipped == {}
    assert type(model[1]) is expected and model[1].precision == "fast"
    if approximate is not None:
        assert model[1].approximate == approximate
    with torch.no_grad():
        torch.testing.assert_close(model(x), before, rtol=1e-5, atol=1e-6)
    assert fat.replace_activations(model) == {}  # nothing left to swap


@pytest.mark.parametrize("qualname, module, words", [
    ("ClippedGELUActivation", "transformers.activations", "clipped"),
    ("ReLUSquaredActivation", "transformers.activations", "relu(x)²"),
    ("HardMish", "timm.layers.activations", "hard-Mish"),
])
def test_known_other_functions_reported_and_left_alone(qualname, module, words):
    activation = stand_in(qualname, lambda x: F.gelu(x).clamp(-10.0, 10.0), module)
    model = block(activation)
    result = fat.replace_activations(model)
    assert result == {} and model[1] is activation
    assert list(result.skipped) == ["1"] and words in result.skipped["1"] and qualname in result.skipped["1"]


def test_known_name_computing_something_else_fails_its_probe():
    """A class under a known name whose forward is not that function (a
    subclass in disguise, a patched forward) is left alone, with the place
    where the probe disagreed."""
    impostor = stand_in("NewGELUActivation", torch.relu)
    clipped = stand_in("GELUActivation", lambda x: F.gelu(x).clamp(-10.0, 10.0))
    model = torch.nn.Sequential(block(impostor), block(clipped))
    result = fat.replace_activations(model)
    assert result == {} and model[0][1] is impostor and model[1][1] is clipped
    assert set(result.skipped) == {"0.1", "1.1"}
    assert all("differs from fastact's GELU on a probe" in why for why in result.skipped.values())


def test_unknown_classes_untouched_and_unreported():
    other = stand_in("MyActivation", torch.tanh, module="mymodels.layers")
    model = block(other)
    result = fat.replace_activations(model)
    assert result == {} and result.skipped == {} and model[1] is other


def test_hooks_and_training_mode_kept():
    """The hooks move to the replacement; the probe does not fire them."""
    activation = stand_in("SiLUActivation", F.silu)
    model = block(activation).train()
    seen = []
    activation.register_forward_hook(lambda module, args, output: seen.append(type(module).__name__))
    fat.replace_activations(model, precision="accurate")
    assert type(model[1]) is fat.SiLU and model[1].training and model[1].precision == "accurate"
    model(torch.randn(4, 8))
    assert seen == ["SiLU"]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_probe_in_the_models_dtype(dtype):
    if dtype not in fat._DTYPES:
        pytest.skip("bfloat16 needs ml_dtypes")
    model = block(stand_in("NewGELUActivation", new_gelu), dtype)
    x = (torch.randn(16, 8) * 3).to(dtype)
    with torch.no_grad():
        before = model(x)
    assert dict(fat.replace_activations(model)) == {"1": "NewGELUActivation"}
    loose = {} if dtype == torch.float64 else {"rtol": 2e-2, "atol": 2e-2}  # the formula's own 16-bit roundings
    with torch.no_grad():
        torch.testing.assert_close(model(x), before, **loose)


# ---- real models, where transformers is installed ---------------------------

def transformers_models():
    transformers = pytest.importorskip("transformers")
    small = dict(num_hidden_layers=2, num_attention_heads=2)
    return {
        "bert": (transformers.BertModel(transformers.BertConfig(hidden_size=64, intermediate_size=128,
                                                                vocab_size=100, **small)),
                 {"GELUActivation": 2, "Tanh": 1}),
        "gpt2": (transformers.GPT2Model(transformers.GPT2Config(n_embd=64, n_layer=2, n_head=2, vocab_size=100,
                                                                bos_token_id=0, eos_token_id=0)),
                 {"NewGELUActivation": 2}),
        "llama": (transformers.LlamaModel(transformers.LlamaConfig(hidden_size=64, intermediate_size=128,
                                                                   num_key_value_heads=2, vocab_size=100, **small)),
                  {"SiLUActivation": 2}),
        "vit": (transformers.ViTModel(transformers.ViTConfig(hidden_size=64, intermediate_size=128, image_size=32,
                                                             patch_size=8, **small)),
                {"GELUActivation": 2, "Tanh": 1}),
        "clip": (transformers.CLIPTextModel(transformers.CLIPTextConfig(hidden_size=64, intermediate_size=128,
                                                                        vocab_size=100, **small)),
                 {"QuickGELUActivation": 2}),
    }


@pytest.mark.parametrize("name", ["bert", "gpt2", "llama", "vit", "clip"])
def test_transformers_models_swapped_and_unchanged(name):
    torch.manual_seed(0)
    model, expected = transformers_models()[name]
    model.eval()
    inputs = ({"pixel_values": torch.randn(2, 3, 32, 32)} if name == "vit"
              else {"input_ids": torch.randint(0, 100, (2, 16))})
    with torch.no_grad():
        before = model(**inputs).last_hidden_state
    result = fat.replace_activations(model)
    counts = {}
    for cls in result.values():
        counts[cls] = counts.get(cls, 0) + 1
    assert counts == expected and result.skipped == {}
    with torch.no_grad():
        torch.testing.assert_close(model(**inputs).last_hidden_state, before, rtol=1e-5, atol=1e-5)


# ---- the inference path: no custom-op dispatch where no autograd looks ------

@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "no_grad_required"])
def test_untracked_calls_equal_the_custom_op(mode):
    """Under no_grad / inference_mode (or for inputs that need no gradient)
    the functions call the kernel on the tensor's memory: the same bits as
    the custom op, a tensor of its own, and no graph."""
    x = torch.randn(3, 258, dtype=torch.float32) * 4
    x.requires_grad_(mode == "no_grad_required")
    cases = [(fat.gelu, {}), (fat.gelu, {"approximate": "tanh"}), (fat.silu, {}), (fat.tanh, {}),
             (fat.softplus, {"beta": 2.0, "threshold": 10.0}), (fat.softmax, {"dim": 1}), (fat.glu, {"dim": 1}),
             (fat.elu, {"alpha": 0.5, "precision": "accurate"})]
    expected = [f(x.detach(), **kw) for f, kw in cases]  # through the custom op
    context = torch.inference_mode() if mode == "inference_mode" else torch.no_grad()
    with context:
        for (f, kw), want in zip(cases, expected):
            got = f(x, **kw)
            assert got.grad_fn is None and not got.requires_grad
            assert got.data_ptr() != x.data_ptr()
            torch.testing.assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_untracked_views(dtype):
    """The inference path on views: transposed, strided, empty and lazily
    negated (torch._neg_view, whose memory holds -x) tensors give the NumPy
    function's bits; floating-point reports follow np.errstate."""
    x = (torch.randn(5, 301, dtype=torch.float64) * 5).to(dtype)
    functions = {"gelu": (fat.gelu, fa.gelu), "quick_gelu": (fat.quick_gelu, fa.quick_gelu),
                 "logsigmoid": (fat.logsigmoid, fa.log_sigmoid), "softplus": (fat.softplus, fa.softplus)}
    with torch.no_grad():
        for name, (ours, numpy_function) in functions.items():
            for t in (x, x.t(), x[:, ::2], x[:0], torch._neg_view(x)):
                got = ours(t)
                want = numpy_function(t.resolve_neg().numpy())
                assert got.shape == t.shape and got.dtype == t.dtype, name
                np.testing.assert_array_equal(got.numpy(), want, err_msg=name)
        huge = torch.full((8,), torch.finfo(dtype).max, dtype=dtype)
        with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="selu"):
            fat.selu(huge)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("precision", ["fast", "accurate"])
def test_untracked_on_memory_matches_numpy(dtype, precision):
    """The row and elementwise loops run straight on a contiguous tensor's
    memory: the NumPy functions' bits, for every shape the path takes (0-d,
    empty, rows along the last axis) and the ones it leaves to NumPy."""
    x = (torch.randn(4, 3, 130, dtype=torch.float64) * 6).to(dtype)
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":  # the path is on: its own result, not a fallback's
        assert fa._ext.tensor_on_memory(fat._ON_MEMORY["silu"], False, fat._DTYPE_CODES[dtype], x) is not None
    elementwise = {"gelu": fa.gelu, "silu": fa.silu, "sigmoid": fa.sigmoid, "tanh": fa.tanh, "mish": fa.mish,
                   "logsigmoid": fa.log_sigmoid, "hardswish": fa.hardswish, "relu": fa.relu}
    with torch.no_grad():
        for name, numpy_function in elementwise.items():
            for t in (x, x[0, 0, 0], x[:0]):
                got = getattr(fat, name)(t, precision=precision)
                assert got.shape == t.shape and got.dtype == t.dtype, name
                np.testing.assert_array_equal(got.numpy(), numpy_function(t.numpy(), precision=precision),
                                              err_msg=name)
        if dtype == torch.float16:
            return
        for name in ("softmax", "log_softmax"):
            for dim in (-1, 2, 1, 0):
                got = getattr(fat, name)(x, dim, precision=precision)
                want = getattr(fa, name)(x.numpy(), axis=dim, precision=precision)
                np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{name} dim={dim}")
            assert getattr(fat, name)(x[:, :, :0], -1).shape == (4, 3, 0)


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0", reason="the path needs NumPy 2's report of flags")
def test_one_call_checks_take_only_what_the_slow_checks_take():
    """tensor_untracked and rows_untracked (every inference check in one C
    call) serve plain contiguous tensors and decline everything else, which
    then takes the checked Python path."""
    class Sub(torch.Tensor):
        pass

    x = torch.randn(3, 40)
    op = fat._ON_MEMORY["silu"]
    assert fa._ext.tensor_untracked(op, "fast", x) is not None
    assert fa._ext.tensor_untracked(op, "accurate", x.double()) is not None
    assert fa._ext.rows_untracked(0, "fast", -1, x) is not None
    assert fa._ext.rows_untracked(1, "accurate", 1, x) is not None
    needs_grad = torch.randn(3, 40, requires_grad=True)
    declined = [x.t(), x[:, ::2], torch._neg_view(x), x.to(torch.int32), x.as_subclass(Sub), needs_grad]
    for t in declined:
        assert fa._ext.tensor_untracked(op, "fast", t) is None
        assert fa._ext.rows_untracked(0, "fast", -1, t) is None
    assert fa._ext.tensor_untracked(op, "medium", x) is None and fa._ext.tensor_untracked(op, "fast", x.numpy()) is None
    for dim in (0, True, 1.0, None):
        assert fa._ext.rows_untracked(0, "fast", dim, x) is None
    assert fa._ext.rows_untracked(0, "fast", -1, x.half()) is None  # the rows path: float32 and float64
    with torch.no_grad():
        assert fa._ext.tensor_untracked(op, "fast", needs_grad) is not None


def test_tracked_calls_keep_the_custom_op():
    x = torch.randn(64, requires_grad=True)
    y = fat.gelu(x)
    assert y.grad_fn is not None
    compiled = torch.compile(lambda t: fat.silu(t) * 2, fullgraph=True, backend="aot_eager")
    with torch.no_grad():
        torch.testing.assert_close(compiled(x.detach()), fat.silu(x.detach()) * 2, rtol=0, atol=0)


def test_torch_op_tables_follow_the_manifest():
    """Every elementwise op with a derivative and every gated op of the
    manifest is a fastact.torch op (by its name or torch's spelling), and the
    untracked path knows every one-tensor op: a new activation cannot be left
    out of the adapter unnoticed."""
    from fastact._manifest import OPS
    for op in OPS:
        if not op.has_backward or op.kind == "bias":
            continue
        names = {op.name, *op.aliases}
        assert names & set(fat._OPS), f"{op.name} is missing from fastact.torch"
        if op.kind == "elementwise":
            assert names & set(fat._UNTRACKED), f"{op.name} is missing from fastact.torch's untracked path"
