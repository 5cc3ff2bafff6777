"""The suite as users install it: a wheel in a fresh environment, tasks usable from any folder,
the release files, the command-line surface, and what each make target installs system-wide.

The wheel is built from a copy of the checkout's files (what ``pip install git+URL`` builds
from) and installed into a new virtual environment outside the repository. That environment
sees the project environment's site-packages through a ``.pth`` path line, so the heavy
dependencies (torch, lm-eval, ...) are reused without a download, while the suite's own
packages come from the wheel alone: a path line does not run the project environment's own
``.pth`` files, so its editable install of the checkout stays invisible.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import sysconfig
from importlib.metadata import version
from pathlib import Path

import pytest

import custom_metrics
from custom_metrics import cli
from custom_metrics.common.task_folders import TASKS_PATH
from tests.helpers import MIRROR, PAPER_KEYS, REPO, checkout_files

PAPERS = PAPER_KEYS
PY = (".py", ".pyc")


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    completed = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert completed.returncode == 0, f"{command} failed ({completed.returncode}):\n{completed.stderr[-4000:]}"
    return completed


def _fresh_env(folder: Path) -> Path:
    """A new venv (no pip of its own) whose only extra path is the project env's site-packages."""
    _run([sys.executable, "-m", "venv", "--without-pip", str(folder)])
    python = folder / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    base = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
    (site / "_project_env.pth").write_text("".join(f"{path}\n" for path in base))
    return python


def _pip(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The project env's pip acting on another environment (``pip --python``)."""
    return subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), *args], capture_output=True, text=True, cwd=cwd
    )


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout outside the repository (a build never writes into the repository)."""
    root = tmp_path_factory.mktemp("source") / "explain-eval"
    for name in checkout_files():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((REPO / name).read_bytes())
        target.chmod((REPO / name).stat().st_mode)
    return root


@pytest.mark.e2e
def test_wheel_in_a_fresh_env_runs_the_tasks_from_any_folder(source: Path, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(dist), str(source)], cwd=tmp_path)
    (wheel,) = dist.glob("explain_eval-*.whl")
    # built in the clone, it leaves no build/lib copy of the tasks (nor egg-info) for --include_path . to find
    assert not (source / "build").exists() and not list(source.glob("*.egg-info"))
    python = _fresh_env(tmp_path / "env")
    # The constraint keeps the installed torch, as docs/install.md tells users to do; --no-index
    # makes any wish to download (a torch build, a missing dependency) an error.
    keep = tmp_path / "keep-torch.txt"
    keep.write_text(_run([str(python), "-c", "import torch; print(f'torch=={torch.__version__}')"]).stdout)
    installed = _pip(python, "install", "--no-index", "-c", str(keep), f"{wheel}[all]", cwd=tmp_path)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    assert re.search(r"Requirement already satisfied: torch[=<>!~ ,\d.]* in ", installed.stdout)
    assert "Successfully installed explain-eval-" in installed.stdout
    assert re.findall(r"Successfully installed (.+)", installed.stdout) == [
        f"explain-eval-{custom_metrics.__version__}"
    ]

    env_root = (tmp_path / "env").resolve()
    where = json.loads(
        _run(
            [str(python), "-c", "import json, custom_metrics, ibe_postprocess, lm_eval_tasks, torch; "
             "print(json.dumps({m.__name__: m.__file__ for m in "
             "(custom_metrics, ibe_postprocess, lm_eval_tasks, torch)}))"],
            cwd=tmp_path,
        ).stdout
    )  # fmt: skip
    for name in ("custom_metrics", "ibe_postprocess", "lm_eval_tasks"):
        assert Path(where[name]).resolve().is_relative_to(env_root), f"{name} not from the wheel: {where[name]}"
    assert not Path(where["torch"]).resolve().is_relative_to(env_root)  # the project env's torch, kept

    explain_eval = tmp_path / "env" / "bin" / "explain-eval"
    package_version = _run([str(python), "-c", "import importlib.metadata as m; print(m.version('explain-eval'))"])
    assert package_version.stdout.strip() == custom_metrics.__version__
    assert _run([str(explain_eval), "--version"]).stdout.strip() == f"explain-eval {custom_metrics.__version__}"
    tasks = Path(_run([str(explain_eval), "tasks-path"], cwd=tmp_path).stdout.strip())
    assert tasks.resolve().is_relative_to(env_root) and tasks.name == "lm_eval_tasks"
    shipped = {str(p.relative_to(tasks)) for p in tasks.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    in_checkout = {
        name.removeprefix("lm_eval_tasks/") for name in checkout_files() if name.startswith("lm_eval_tasks/")
    }
    assert shipped == in_checkout
    for package in ("custom_metrics", "ibe_postprocess"):  # their data files: the papers' tables and words, assets
        root = Path(where[package]).parent
        shipped = {str(p.relative_to(root.parent)) for p in root.rglob("*") if p.is_file() and p.suffix not in PY}
        assert shipped == {
            name for name in checkout_files() if name.startswith(f"{package}/") and not name.endswith(".py")
        }

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    command = (
        'python -m lm_eval --model dummy --include_path "$(explain-eval tasks-path)" '
        "--tasks geese_noexp,rule_main --limit 2 --output_path out --log_samples"
    )
    environment = {**os.environ, "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"}
    environment.update(EXPLAIN_EVAL_DATA=str(MIRROR), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    environment.pop("PYTHONPATH", None)
    run = _run(["bash", "-c", command], cwd=elsewhere, env=environment)
    log = run.stdout + run.stderr
    assert f"rule_main ({tasks}/rule/rule_main.yaml)" in log and f"geese_noexp ({tasks}/geese/" in log
    (results_file,) = elsewhere.glob("out/*/results_*.json")
    results = json.loads(results_file.read_text())
    assert set(results["results"]) == {"geese_noexp", "rule_main"}
    assert results["n-samples"]["geese_noexp"]["effective"] == results["n-samples"]["rule_main"]["effective"] == 2
    assert "acc,none" in results["results"]["geese_noexp"] and "mainq_acc,none" in results["results"]["rule_main"]


def test_editable_install_prints_no_deprecation_warning(source: Path, tmp_path: Path) -> None:
    python = _fresh_env(tmp_path / "env")
    installed = _pip(python, "install", "--no-deps", "--editable", str(source), cwd=tmp_path)
    output = installed.stdout + installed.stderr
    assert installed.returncode == 0, output[-4000:]
    assert "Successfully installed explain-eval-" in output
    assert "deprecat" not in output.lower(), output


def test_version_is_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert version("explain-eval") == custom_metrics.__version__
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"explain-eval {custom_metrics.__version__}\n"


def test_tasks_path_is_the_default_include_path(capsys: pytest.CaptureFixture[str]) -> None:
    from custom_metrics.sweep.command import build_parser

    assert cli.main(["tasks-path"]) == 0
    printed = Path(capsys.readouterr().out.strip())
    assert printed == TASKS_PATH and all((printed / paper / "README.md").is_file() for paper in PAPERS)
    assert build_parser().parse_args(["--models", "m", "--tasks", "t", "--out", "o"]).include_path == TASKS_PATH
    assert _parser("rule-protocol").get_default("include_path") == TASKS_PATH


def test_a_papers_own_commands_come_from_its_package(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """cli.py names no paper's command: a paper package declares its own (``COMMANDS``), which
    ``--help`` lists and ``explain-eval`` runs; one named as another command is refused in one line."""
    import custom_metrics.geese
    from custom_metrics.common.task_folders import paper_packages

    declared = {name for package in paper_packages() for name in getattr(package, "COMMANDS", {})}
    assert declared == {"rule-protocol", "reg-analysis", "reg-rejudge", "reg-dapo", "ibe"}
    assert not declared & set(cli.COMMANDS)
    command = ("custom_metrics.common.task_folders", "print the task folder, again")
    monkeypatch.setattr(custom_metrics.geese, "COMMANDS", {"geese-folder": command}, raising=False)
    cli.commands.cache_clear()
    try:
        assert cli.main(["--help"]) == 0 and "  geese-folder   print the task folder, again" in capsys.readouterr().out
        assert cli.main(["geese-folder"]) == 0 and capsys.readouterr().out == f"{TASKS_PATH}\n"
        monkeypatch.setattr(custom_metrics.geese, "COMMANDS", {"sweep": command})
        cli.commands.cache_clear()
        assert cli.main(["--help"]) == 2
        assert capsys.readouterr().err == (
            "explain-eval: custom_metrics.geese: command 'sweep' is the suite's or another paper's: rename it\n"
        )
    finally:
        cli.commands.cache_clear()


def test_release_files() -> None:
    assert (REPO / "LICENSE").read_text().startswith("MIT License\n")
    changelog = (REPO / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[([^\]]+)\]", changelog, flags=re.M)
    assert releases[0] == "Unreleased" and releases[1] == custom_metrics.__version__
    assert releases[1:] == sorted(releases[1:], key=lambda v: tuple(map(int, v.split("."))), reverse=True)
    assert re.search(
        rf"^## \[{re.escape(custom_metrics.__version__)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, flags=re.M
    )
    headings = set(re.findall(r"^### (.+)$", changelog, flags=re.M))
    assert headings <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, headings
    assert f'version: "{custom_metrics.__version__}"' in (REPO / "CITATION.cff").read_text()
    validated = subprocess.run(
        [str(Path(sys.executable).with_name("cffconvert")), "--validate", "-i", str(REPO / "CITATION.cff")],
        capture_output=True,
        text=True,
    )
    assert validated.returncode == 0, validated.stdout + validated.stderr
    citation = (REPO / "CITATION.cff").read_text()
    for title in (
        "GEESE - Generating and Evaluating Explanations for Semantic Entailment",
        "Evaluating the Rationale Understanding of Critical Reasoning in Logical Reading Comprehension",
        "Explanation Generation for Contradiction Reconciliation with LLMs",
        "Inference to the Best Explanation in Large Language Models",
    ):
        assert title in citation
    assert all(f"family-names: {name}" in citation for name in ("Chan", "Zhao", "Gaizauskas"))
    assert "| **REG** (Chan, Zhao & Gaizauskas" in (REPO / "README.md").read_text()


# --- the command line: help text everywhere, one spelling ----------------------------------------


class _Parsed(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _parser(command: str) -> argparse.ArgumentParser:
    """The parser a subcommand builds, caught at its first parse (nothing runs)."""

    def catch(self: argparse.ArgumentParser, *args, **kwargs):
        raise _Parsed(self)

    original = argparse.ArgumentParser.parse_known_args
    argparse.ArgumentParser.parse_known_args = catch  # type: ignore[method-assign]
    try:
        cli.main([command])
    except _Parsed as parsed:
        return parsed.parser
    finally:
        argparse.ArgumentParser.parse_known_args = original  # type: ignore[method-assign]
    raise AssertionError(f"explain-eval {command} parsed no arguments")


def _options(parser: argparse.ArgumentParser, prog: str) -> list[tuple[str, list[str], str | None]]:
    """(where, option strings or the positional's name, help) of every argument, subcommands included."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found.append((prog, [name], helps.get(name)))
                found += _options(sub, f"{prog} {name}")
        elif not isinstance(action, argparse._HelpAction):
            found.append((prog, action.option_strings or [action.dest], action.help))
    return found


# lm-eval's own CLI, passed through unchanged (its options are the harness' spellings)
PASS_THROUGH = {"lm-eval"}


@pytest.mark.parametrize("command", sorted(set(cli.commands()) - PASS_THROUGH))
def test_every_option_has_help_and_one_spelling(command: str) -> None:
    for prog, names, help_text in _options(_parser(command), f"explain-eval {command}"):
        assert help_text and help_text != argparse.SUPPRESS, f"{prog} {'/'.join(names)}: no help text"
        long = [name for name in names if name.startswith("--")]
        assert not long or "_" not in long[0], f"{prog} {'/'.join(names)}: lm-eval's underscore spelling comes first"


def test_lm_eval_spellings_are_aliases() -> None:
    protocol = _parser("rule-protocol")
    underscored, _ = protocol.parse_known_args(["--output_path", "o", "--include_path", "i"])
    hyphened, _ = protocol.parse_known_args(["--output-path", "o", "--include-path", "i"])
    assert vars(underscored) == vars(hyphened) and underscored.output_path == Path("o")
    sweep = _parser("sweep")
    required = ["--models", "m", "--tasks", "t", "--out", "o"]
    underscored, _ = sweep.parse_known_args(
        [*required, "--include_path", "i", "--batch_size", "4", "--model_args", "a"]
    )
    hyphened, _ = sweep.parse_known_args([*required, "--include-path", "i", "--batch-size", "4", "--model-args", "a"])
    assert vars(underscored) == vars(hyphened) and underscored.batch_size == "4"


# --- system packages per make target ------------------------------------------------------------


def _make_dry_run(target: str, tmp_path: Path, *variables: str) -> str:
    """What ``make TARGET`` runs on a machine with nothing installed (-B: every step, -n: run none)."""
    return _run(["make", "-n", "-B", target, f"VENV={tmp_path / 'no-venv'}", *variables], cwd=REPO).stdout


def _scripts_run(recipe: str) -> set[str]:
    """The scripts a recipe runs, and the scripts those run in turn."""
    seen: set[str] = set()
    todo = re.findall(r"scripts/[\w.-]+\.sh", recipe)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            text = (REPO / name).read_text()
            todo += re.findall(r"scripts/[\w.-]+\.sh", text)
            todo += [f"scripts/{called}" for called in re.findall(r'\$\(dirname "\$0"\)/([\w.-]+\.sh)', text)]
    return seen


def test_make_demo_installs_neither_slurm_nor_chromium(tmp_path: Path) -> None:
    demo = _make_dry_run("demo", tmp_path)
    assert "install_swipl.sh" in demo and "lm_eval" in demo  # the whole chain, install included
    scripts = _scripts_run(demo)
    assert scripts == {"scripts/install_swipl.sh"}
    for text in [demo, *((REPO / name).read_text() for name in scripts)]:
        assert not re.search(r"slurm|munge|chromium", text, flags=re.I)
    test = _make_dry_run("test", tmp_path)
    assert {"scripts/install_slurm.sh", "scripts/install_chromium.sh"} <= _scripts_run(test)


def test_make_install_passes_torch_arguments_to_pip(tmp_path: Path) -> None:
    cpu = "TORCH=torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
    assert "pip install -q 'torch==2.13.0' '--index-url' 'https://download.pytorch.org/whl/cpu'" in _make_dry_run(
        "install", tmp_path, cpu
    )
    assert "pip install -q 'torch>=2.6' >&2" in _make_dry_run("install", tmp_path, "TORCH=torch>=2.6")
