"""CLI manners: --version, whole descriptions in the help, help on every option and argument,
examples in `check --help`, and `check --claims`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

import factseek
from factseek.cli import app

runner = CliRunner()


def commands(cmd=None, path=()):
    """(path, command) for every leaf command of the CLI."""
    cmd = cmd or typer.main.get_command(app)
    if hasattr(cmd, "commands"):
        for name, sub in cmd.commands.items():
            yield from commands(sub, (*path, name))
    else:
        yield path, cmd


def test_version():
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout == f"factseek {factseek.__version__}\n"


def test_every_option_and_argument_has_help():
    missing = [
        f"factseek {' '.join(path)} {param.opts[0]}"
        for path, cmd in commands()
        for param in cmd.params
        if not (getattr(param, "help", None) or "").strip()
    ]
    assert missing == []
    assert len(list(commands())) >= 15  # the walk reached the subcommand groups


def test_help_lists_whole_descriptions():
    root = typer.main.get_command(app)
    for group in [root, *(c for c in root.commands.values() if hasattr(c, "commands"))]:
        args = [] if group is root else [group.name]
        listing = " ".join(
            runner.invoke(app, [*args, "--help"]).stdout.split("Commands:", 1)[1].split()
        )
        for sub in group.commands.values():
            first = (sub.help or "").split("\n\n")[0]
            sentence = " ".join(first.split()).split(". ")[0].rstrip(".")
            assert sentence in listing, f"{sub.name}: {sentence!r} cut short in: {listing}"
    top = runner.invoke(app, ["--help"]).stdout
    assert "--version" in top


def test_check_help_shows_two_examples():
    text = runner.invoke(app, ["check", "--help"]).stdout
    examples = [
        line.strip() for line in text.splitlines() if line.strip().startswith("factseek check ")
    ]
    assert len(examples) >= 2
    assert any("--claims" in e for e in examples) and any("--date" in e for e in examples)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("store")
    docs = [
        {
            "url": "https://ledger.example/buses",
            "title": "Council approves buses",
            "published": "2023-03-15",
            "text": "The council approved 4 new buses in March after a long debate.",
        },
        {
            "url": "https://ledger.example/fares",
            "title": "Fares",
            "published": "2022-11-01",
            "text": "Bus fares will be reviewed by March, the transit office said.",
        },
    ]
    (tmp / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    assert (
        runner.invoke(
            app, ["index", "build", str(tmp / "docs.jsonl"), "--store", str(tmp / "s")]
        ).exit_code
        == 0
    )
    return tmp / "s"


def test_check_claims_file(store, tmp_path):
    claims = tmp_path / "claims.jsonl"
    claims.write_text(
        json.dumps({"id": "a", "claim": "The council approved 4 new buses.", "date": "2023-06-01"})
        + "\n"
        + json.dumps({"text": "Bus fares will be reviewed.", "speaker": "Ann"})
        + "\n"
    )
    r = runner.invoke(
        app,
        [
            "check",
            "--claims",
            str(claims),
            "--store",
            str(store),
            "--date",
            "2023-02-01",
            "-f",
            "json",
            "-q",
        ],
    )
    assert r.exit_code == 0, r.output
    reports = [json.loads(line) for line in r.stdout.splitlines()]
    assert [x["claim"]["id"] for x in reports] == ["a", None]
    assert [x["claim"]["date"] for x in reports] == ["2023-06-01", "2023-02-01"]  # --date: default
    assert reports[1]["claim"]["speaker"] == "Ann"
    r = runner.invoke(
        app, ["check", "--claims", str(claims), "--store", str(store), "-f", "md", "-q"]
    )
    assert r.exit_code == 0 and r.stdout.count("# factseek report") == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give a claim or --claims FILE"),
        (["a claim", "--claims", "{claims}"], "give a claim or --claims FILE"),
        (["--claims", "{claims}", "-f", "html"], "an HTML report holds one claim"),
        (["--claims", "{bad}"], "bad.jsonl:2: "),
    ],
)
def test_check_claims_bad_usage(store, tmp_path, args, message):
    claims = tmp_path / "claims.jsonl"
    claims.write_text('{"claim": "one"}\n{"claim": "two"}\n')
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"claim": "one"}\n{"claim": ""}\n')
    args = [a.replace("{claims}", str(claims)).replace("{bad}", str(bad)) for a in args]
    r = runner.invoke(app, ["check", *args, "--store", str(store), "-q"])
    assert r.exit_code == 2 and message in r.stderr and "Traceback" not in r.output
