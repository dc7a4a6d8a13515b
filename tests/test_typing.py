"""The package's type stubs (__init__.pyi, generated from the manifest) agree
with the compiled functions, and a type checker reads them as meant: a
float32 array in, a float32 array out; out= is what comes back; a wrong
choice or argument is an error."""
import ast
import inspect
import pathlib
import subprocess
import sys
import textwrap

import pytest

import fastact as fa

STUB = pathlib.Path(fa.__file__).with_name("__init__.pyi")


def stub_overloads():
    """name -> every overload's (parameter names and kinds, defaults) in the stub."""
    tree = ast.parse(STUB.read_text())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            a = node.args
            params = [(p.arg, "positional") for p in a.posonlyargs + a.args] + [(p.arg, "keyword") for p in a.kwonlyargs]
            if a.kwarg:
                params.append((a.kwarg.arg, "var_keyword"))
            defaults = [ast.literal_eval(d) if not (isinstance(d, ast.Constant) and d.value is Ellipsis) else ...
                        for d in a.defaults]
            found.setdefault(node.name, []).append((params, defaults))
    return found


def runtime(function):
    kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional", inspect.Parameter.KEYWORD_ONLY: "keyword",
             inspect.Parameter.VAR_KEYWORD: "var_keyword"}
    sig = inspect.signature(function)
    params = [(p.name, kinds[p.kind]) for p in sig.parameters.values()]
    defaults = [p.default for p in sig.parameters.values()
                if p.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD and p.default is not inspect.Parameter.empty]
    return params, defaults


def test_package_is_typed():
    assert STUB.exists() and STUB.with_name("py.typed").exists()


@pytest.mark.parametrize("name", [n for n in fa.__all__ if callable(getattr(fa, n)) and n != "ufuncs"])
def test_stub_matches_the_function(name):
    stubs = stub_overloads()
    assert name in stubs, f"{name} is not in __init__.pyi (python tools/gen_manifest.py)"
    if name in ("available_isas", "isa", "set_isa", "get_num_threads", "set_num_threads"):
        assert [p for p, _ in stubs[name][0][0]] == list(inspect.signature(getattr(fa, name)).parameters)
        return
    params, defaults = runtime(getattr(fa, name))
    for overload_params, overload_defaults in stubs[name]:   # every overload: the same parameters
        assert overload_params == params
        assert overload_defaults == defaults


def test_a_type_checker_reads_the_stubs(tmp_path):
    pytest.importorskip("mypy")
    program = tmp_path / "use.py"
    program.write_text(textwrap.dedent("""
        import numpy as np
        import fastact as fa
        x = np.ones(3, np.float32)
        reveal_type(fa.gelu(x))
        reveal_type(fa.swiglu_backward(x, x, x))
        out = np.empty(3, np.float64)
        reveal_type(fa.silu(x, out=out))
        reveal_type(fa.softmax([1.0, 2.0], axis=0))
        fa.gelu(x, approximate="erf")
        fa.leaky_relu(x, negative_slope="0.1")
    """))
    result = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                             str(program)], capture_output=True, text=True, cwd=tmp_path)
    lines = result.stdout.splitlines()
    revealed = [line.split("Revealed type is ")[1] for line in lines if "Revealed type is" in line]
    assert len(revealed) == 4, result.stdout
    assert "_32Bit" in revealed[0] and revealed[0].startswith('"numpy.ndarray')
    assert revealed[1].startswith('"tuple[numpy.ndarray') and revealed[1].count("_32Bit") == 2
    assert "numpy.float64" in revealed[2]
    assert "dtype[Any]" in revealed[3]
    errors = [line for line in lines if ": error:" in line]
    assert len(errors) == 2 and all('No overload variant' in e for e in errors), result.stdout


@pytest.mark.parametrize("name", [n for n in fa.__all__ if callable(getattr(fa, n)) and ">>>" in (getattr(fa, n).__doc__ or "")])
def test_docstring_example_runs(name):
    """help(fastact.NAME) shows an example; it gives what it says (values from
    the float64 reference, rounded to 4 places)."""
    import doctest
    function = getattr(fa, name)
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    test = parser.get_doctest(function.__doc__, {}, name, None, 0)
    assert test.examples
    result = runner.run(test, out=lambda text: None)
    assert result.failed == 0, f"fastact.{name}'s docstring example fails"


def test_every_generated_function_has_an_example():
    missing = [n for n in fa._ext.PUBLIC if ">>>" not in (getattr(fa, n).__doc__ or "")]
    assert set(missing) <= {"softmax", "log_softmax", "softmax_backward", "log_softmax_backward", "glu",
                            "glu_backward"}, missing
