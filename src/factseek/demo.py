"""The bundled demo: a fictional news story, a sample claim, and a store built once in the cache.

The documents (``factseek/data/demo/docs.jsonl`` plus a few raw HTML pages in ``html/``) were
written for this project. Some are dated after the claim, some sit on fact-checking sites, a few
are PDFs, videos or undated, so a demo run shows both constraints at work.
"""

from __future__ import annotations

import hashlib
import json
from importlib.resources import files
from pathlib import Path

from factseek.types import Claim


def demo_dir() -> Path:
    return Path(str(files("factseek") / "data" / "demo"))


def demo_sources() -> list[Path]:
    d = demo_dir()
    sources = [d / "docs.jsonl"]
    if (d / "html").is_dir():
        sources.append(d / "html")
    return sources


def demo_claim() -> Claim:
    from factseek.api import make_claim

    row = json.loads((demo_dir() / "claim.json").read_text(encoding="utf-8"))
    return make_claim(
        row["text"],
        date=row.get("date"),
        speaker=row.get("speaker"),
        venue=row.get("venue"),
        id=row.get("id"),
    )


def _fingerprint() -> str:
    from factseek import __version__
    from factseek.store.layout import FORMAT_VERSION

    h = hashlib.sha256(
        f"{__version__} store format {FORMAT_VERSION}".encode()
    )  # a new format rebuilds
    for src in demo_sources():
        paths = sorted(src.rglob("*")) if src.is_dir() else [src]
        for p in paths:
            if p.is_file():
                h.update(p.name.encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def demo_store(path: Path, *, progress: bool = False) -> Path:
    """The demo store at ``path``, built (atomically) unless an up-to-date one is there."""
    from factseek.store import build_store

    stamp = path / "demo.fingerprint"
    fp = _fingerprint()
    if stamp.is_file() and stamp.read_text().strip() == fp:
        return path
    build_store(demo_sources(), path, progress=progress, overwrite=True)
    stamp.write_text(fp + "\n")
    return path
