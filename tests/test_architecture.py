"""The package's shape (docs/ARCHITECTURE.md): no import circles, the ground imports nothing above
it, every package imports only its own layer or below, the root stays small, old paths work.

Imports are read from the source with ``ast``, all of them: module level, inside functions and
under ``if TYPE_CHECKING:``. ``from factseek.x import y`` counts as importing ``factseek.x.y``
when that is a module, else ``factseek.x``.
"""

from __future__ import annotations

import ast
import importlib
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "src" / "factseek"

#: The ground: modules that import nothing from factseek but each other.
GROUND = {"types", "errors", "text", "files", "sanitize", "redact", "labels", "validate", "_moved"}

#: Layer of each top-level module or package; a module may import its own layer or below.
LAYERS: dict[str, int] = {
    **dict.fromkeys(GROUND, 0),
    # plumbing the stages share
    **dict.fromkeys(["ml", "net", "llm", "metrics", "datasets"], 1),
    # the pipeline's stages, in order, and the rewriter beside them
    **dict.fromkeys(
        [
            "decompose",
            "search",
            "constraints",
            "store",
            "fetch",
            "pages",
            "passages",
            "summarize",
            "stance",
            "judge",
            "rewrite",
        ],
        2,
    ),
    # what a run's results become: the report, the reviewer's records
    **dict.fromkeys(["report", "review"], 3),
    # the library's face and what runs it many times
    **dict.fromkeys(["__init__", "pipeline", "api", "demo", "runs"], 4),
    # the faces people use
    **dict.fromkeys(["cli", "web", "__main__"], 5),
}

#: What the package root may hold besides packages: the face and the ground.
ROOT_FILES = {"__init__.py", "__main__.py", "api.py", "pipeline.py", "demo.py", "passages.py"} | {
    f"{m}.py" for m in GROUND
}

MAX_LINES = 620  # "no file over about 600 lines"


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (p, is_pkg)
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()

    def known(name: str) -> str:
        while name not in mods and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, (path, is_pkg) in mods.items():
        base = m if is_pkg else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == "factseek":
                        edges[m].add(known(a.name))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = base.split(".")[: len(base.split(".")) - node.level + 1]
                    target = ".".join(parts + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "factseek":
                    continue
                for a in node.names:
                    sub = f"{target}.{a.name}"
                    edges[m].add(sub if sub in mods else known(target))
        edges[m].discard(m)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_ground_imports_only_ground():
    bad = {
        m: sorted(t for t in targets if _top(t) not in GROUND)
        for m, targets in _graph().items()
        if _top(m) in GROUND
    }
    assert {m: t for m, t in bad.items() if t} == {}


def test_every_module_has_a_layer_and_imports_at_most_its_own():
    edges = _graph()
    assert sorted({_top(m) for m in edges} - set(LAYERS)) == []
    upward = sorted(
        f"{m} -> {t}"
        for m, targets in edges.items()
        for t in targets
        if LAYERS[_top(t)] > LAYERS[_top(m)]
    )
    assert upward == []


def test_the_root_holds_the_face_the_ground_and_packages():
    files = {p.name for p in ROOT.glob("*.py")}
    assert files == ROOT_FILES


def test_no_file_is_too_long():
    long = {
        str(p.relative_to(ROOT)): n
        for p in ROOT.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


@pytest.mark.parametrize(
    ("old", "name"),
    [
        ("factseek.batch", "run_batch"),
        ("factseek.batch_summary", "finish_batch"),
        ("factseek.encode", "encoder_from_name"),
        ("factseek.ratings", "load_ratings"),
        ("factseek.web.claimreview", "claim_review"),
        ("factseek.extract", "extract_html"),
        ("factseek.rewrite.shipped", "load_rewriter"),
    ],
)
def test_moved_modules_keep_their_old_paths(old, name, monkeypatch):
    from factseek._moved import MOVED

    monkeypatch.delitem(sys.modules, old, raising=False)  # imported before: import it again
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])  # the same module, not a copy
    assert module.__name__ == MOVED[old]
    assert callable(getattr(module, name))
    assert old in sys.modules
    assert [str(w.message) for w in caught if w.category is DeprecationWarning] == [
        f"{old} moved to {MOVED[old]}"
    ]


@pytest.mark.parametrize(
    "path",
    [
        "factseek.runs.compare_runs",
        "factseek.review.reviewed",
        "factseek.review.carry_forward",
        "factseek.constraints.url_host_path",
        "factseek.report.render_markdown",
        "factseek.types.Report",
    ],
)
def test_old_names_of_modules_that_became_packages(path):
    module, name = path.rsplit(".", 1)
    assert getattr(importlib.import_module(module), name) is not None


def test_unknown_names_still_raise_attribute_error():
    import factseek.review

    with pytest.raises(AttributeError):
        factseek.review.nothing_here  # noqa: B018


def test_report_methods_work_without_importing_the_renderer_first(tmp_path):
    """``types.Report`` renders through the renderer factseek/__init__.py hands in."""
    import subprocess

    code = (
        "import sys; from factseek.types import Claim, Report\n"
        "assert 'factseek.report' not in sys.modules\n"
        "r = Report(claim=Claim(text='The bridge reopened.'))\n"
        f"r.save({str(tmp_path / 'r.json')!r}); print(Report.load({str(tmp_path / 'r.json')!r}).claim.text)\n"
        "print(r.render('md').splitlines()[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["The bridge reopened.", "# factseek report"]


def test_docs_quote_scripts_that_exist_and_each_folder_lists_its_scripts():
    import re

    repo = ROOT.parents[1]
    texts = [p.read_text(encoding="utf-8") for p in (repo / "docs").glob("*.md")]
    texts.append((repo / "README.md").read_text(encoding="utf-8"))
    quoted = {m for t in texts for m in re.findall(r"\b(?:bench|experiments)/\w+\.py\b", t)}
    assert sorted(q for q in quoted if not (repo / q).is_file()) == []
    for folder in ("bench", "experiments"):
        listed = (repo / folder / "README.md").read_text(encoding="utf-8")
        scripts = sorted(p.name for p in (repo / folder).glob("*.py"))
        assert [s for s in scripts if f"`{s}" not in listed] == []
