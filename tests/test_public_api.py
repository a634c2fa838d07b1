"""The public API: what `import factseek` offers, docs/api.md (every name importable and
documented), and the explicit keyword arguments of `factseek.check`."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import factseek

ROOT = Path(__file__).resolve().parents[1]
API_DOC = ROOT / "docs" / "api.md"


def documented_names() -> list[str]:
    """Every `factseek...` name in the first column of docs/api.md's tables."""
    text = API_DOC.read_text(encoding="utf-8")
    return re.findall(r"^\| `(factseek(?:\.\w+)+)` \|", text, flags=re.M)


def resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def test_the_doc_lists_names_and_each_imports_with_a_docstring():
    names = documented_names()
    assert len(names) >= 40 and len(set(names)) == len(names)
    for name in names:
        obj = resolve(name)  # raises when the page drifts from the code
        if inspect.isfunction(obj) or inspect.isclass(obj):
            assert inspect.getdoc(obj), f"{name} has no docstring"


def test_package_exports_exactly_the_documented_top_level():
    top = {n.split(".", 1)[1] for n in documented_names() if n.count(".") == 1}
    assert set(factseek.__all__) == top
    assert dir(factseek) == sorted(factseek.__all__)
    for name in factseek.__all__:
        assert getattr(factseek, name) is not None
    assert "Any" not in dir(factseek) and "TYPE_CHECKING" not in dir(factseek)
    with pytest.raises(AttributeError):
        factseek.nothing_here  # noqa: B018


def test_import_factseek_stays_light():
    code = "import sys, factseek; print(json.dumps(sorted(m for m in ('numpy', 'torch', 'spacy', 'numba', 'factseek.api') if m in sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", "import json; " + code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""},
    )
    assert json.loads(out.stdout) == []


def test_check_has_explicit_documented_keyword_arguments():
    from factseek.api import CheckOptions

    sig = inspect.signature(factseek.check)
    params = sig.parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in params.values())  # no **options
    assert all(p.kind is p.KEYWORD_ONLY for n, p in params.items() if n != "claim")
    options = set(CheckOptions.__dataclass_fields__)
    assert options <= set(params), f"options missing from check(): {options - set(params)}"
    doc = inspect.getdoc(factseek.check) or ""
    for name in params:
        assert re.search(rf"\b{name}\b", doc), f"check() does not document {name!r}"


def test_report_methods_do_not_import_at_module_level():
    source = (ROOT / "src" / "factseek" / "types.py").read_text(encoding="utf-8")
    top_level = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert not any("factseek" in line for line in top_level)


def test_the_api_page_example_runs(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from factseek.cli import app

    monkeypatch.chdir(tmp_path)
    docs = [
        {
            "url": "https://ledger.example/buses",
            "title": "Council approves buses",
            "published": "2023-03-15",
            "text": "The council approved 4 new buses in March after a long debate.",
        }
    ]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    r = CliRunner().invoke(app, ["index", "build", "docs.jsonl", "--store", "my-store"])
    assert r.exit_code == 0, r.output
    (block,) = re.findall(r"```python\n(.*?)```", API_DOC.read_text(encoding="utf-8"), flags=re.S)
    exec(compile(block, str(API_DOC), "exec"), {})
    assert (tmp_path / "report.html").read_text().startswith("<!doctype html>")
