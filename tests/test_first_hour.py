"""A newcomer's first mistakes, each through the real command: the message says what happened
and what to do, on one line, with the exit status a script can test.

(The stale ``build/lib`` task copy and the one-line errors under ``lm_eval`` are
tests/common/test_task_loading.py; a wheel built in a clone leaving no ``build/`` is
tests/test_packaging.py; the sweep's one-line usage errors are tests/sweep/test_sweep_arguments.py.)
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from custom_metrics.cli import main as explain_eval
from ibe_postprocess import features_file
from ibe_postprocess.folder import FeaturesFolder
from tests.helpers import FIXTURES, MIRROR, REPO, TASKS_DIR, tmpfs


@pytest.fixture()
def read_only_disk(tmp_path: Path):
    with tmpfs(tmp_path / "ro", "ro,size=1m") as mount:
        yield mount


def test_model_path_on_a_read_only_cache_names_the_cache_variable(read_only_disk: Path) -> None:
    """``model-path`` has no --out: the fix for an unwritable cache is EXPLAIN_EVAL_CACHE."""
    command = [sys.executable, "-m", "custom_metrics.cli", "model-path", "--model", "smollm2-135m-instruct"]
    env = {**os.environ, "EXPLAIN_EVAL_CACHE": str(read_only_disk)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("explain-eval model-path: ") and str(read_only_disk) in line
    assert "read-only" in line and "set EXPLAIN_EVAL_CACHE to one" in line and "--out" not in line


def test_ibe_score_on_a_glob_that_matched_nothing_names_log_samples(tmp_path: Path, capsys) -> None:
    pattern = tmp_path / "runs" / "*" / "samples_ibe_copa_*.jsonl"  # what the shell passes on when nothing matches
    code = explain_eval(["ibe", "score", str(pattern), "--out", str(tmp_path / "ibe")])
    (line,) = capsys.readouterr().err.splitlines()
    assert code == 2 and f"{pattern}: no file matches this pattern" in line and "--log_samples" in line
    assert not (tmp_path / "ibe").exists()


def test_ibe_report_without_test_questions_says_how_to_get_them(tmp_path: Path, capsys) -> None:
    """``--limit 2`` holds the first training question only: the report says to raise it or use --samples."""
    with gzip.open(FIXTURES / "ibe" / "bench_features_5000.jsonl.gz", "rt") as handle:
        rows = [{**row, "coherence": 0.5} for row in map(json.loads, handle) if row["split"] == "train"][:4]
    folder = FeaturesFolder(tmp_path / "ibe")
    folder.root.mkdir()
    features_file.write(folder, features_file.Origin(("samples_ibe_copa_x.jsonl",), "0" * 64), rows, [])
    code = explain_eval(["ibe", "report", str(folder.root)])
    err = capsys.readouterr().err
    assert code == 2 and "got 4 train and 0 test rows (field 'split')" in err
    assert "--limit 4 or more" in err and "--samples" in err and "explain-eval ibe score" in err


@pytest.mark.e2e
def test_rule_protocol_after_a_small_limit_says_how_many_splits_hold_each_metric(tmp_path: Path) -> None:
    """With ``--limit 2`` the zero-shot run reaches few of the five subquestion splits: a mean over
    one split is shown as such, never as ``± 0.0``, and the fix is named."""
    out = tmp_path / "rule0"
    command = [sys.executable, "-m", "custom_metrics.cli", "rule-protocol", "--shots", "0", "--model", "dummy"]
    command += ["--limit", "2", "--output_path", str(out)]
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, "EXPLAIN_EVAL_DATA": str(MIRROR)}, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    table = next(line for line in done.stdout.splitlines() if line.startswith("| Table 2, zero-shot"))
    cells = [cell.strip() for cell in table.strip("|").split("|")[1:]]
    single = [cell for cell in cells if "1 of 5 splits" in cell]
    assert single and all(cell.endswith("(1 of 5 splits, no spread)") and "±" not in cell for cell in single), table
    assert "some metrics rest on fewer than the 5 splits" in done.stdout and "--samples" in done.stdout


# Libraries that take seconds to import: a command's --help must not wait for them.
HEAVY = ("torch", "transformers", "datasets", "lm_eval", "spacy", "sklearn", "scipy", "pandas")
# lm-eval's own CLI is lm-eval; reg-analysis reads REG records through the judging module.
HELP_LIGHT = ("", "leaderboard", "rejudge", "reg-rejudge", "download", "sweep", "rule-protocol", "ibe", "tasks-path")


def test_help_imports_no_heavy_library() -> None:
    """Each command's --help in a fresh interpreter, one after the other: after each, no heavy
    library is imported (``--help`` took 12-15 s when the leaderboard's imports pulled in
    datasets, lm-eval, scipy and pandas; measured in seconds, not here: a timed test fails on a loaded machine).
    A heavy import is named with the suite module (and line) that made it, and the module that
    imported it directly."""
    script = (
        "import contextlib, io, sys\n"
        f"HEAVY = {HEAVY!r}\n"
        "by = {}\n"
        "class Spy:  # a finder that finds nothing: it notes who asks for a heavy library first\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        top = name.partition('.')[0]\n"
        "        if top in HEAVY and top not in by:\n"
        "            frames = [sys._getframe(1)]\n"
        "            while frames[-1].f_back:\n"
        "                frames.append(frames[-1].f_back)\n"
        "            names = [(f.f_globals.get('__name__', '?'), f.f_lineno) for f in frames]\n"
        "            names = [(n, line) for n, line in names if not n.startswith(('importlib', '_frozen'))]\n"
        "            ours = next((f'{n}:{line}' for n, line in names if n.startswith(('custom_metrics', "
        "'ibe_postprocess'))), '?')\n"
        "            by[top] = f'{top} (imported by {ours}, directly by {names[0][0]})'\n"
        "        return None\n"
        "sys.meta_path.insert(0, Spy())\n"
        "from custom_metrics.cli import main\n"
        f"for name in {HELP_LIGHT!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try:\n"
        "            main([name, '--help'] if name else ['--help'])\n"
        "        except SystemExit:\n"
        "            pass\n"
        "    print(name or 'top-level', *[by.get(m, m) for m in HEAVY if m in sys.modules], sep='; ')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(HELP_LIGHT) and all(";" not in line for line in lines), "\n".join(lines)


def test_the_demo_says_what_it_costs_and_its_bar_moves_per_request() -> None:
    """``make demo``'s recipe as make expands it: its memory stated, the embedded models' first
    conversion shown (it prints what it does and its time on stderr, no longer discarded), and
    stage 2's requests counted and sent one at a time, so that its bar moves."""
    done = subprocess.run(
        ["make", "-n", "demo", "DEVICE=cpu", f"VENV={sys.prefix}"],  # this interpreter's venv, wherever the tree is
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    recipe = done.stdout
    assert "peak memory about 9 GB" in recipe
    assert "model-path)" in recipe and "model-path 2>/dev/null" not in recipe
    (count,) = [line.strip() for line in recipe.splitlines() if line.strip().startswith("requests=$(")]
    script = count.removesuffix("\\").strip().removesuffix("&&") + ' && echo "$requests"'
    counted = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True, cwd=REPO)
    generated = json.loads(re.findall(r"--samples '([^']*)'", recipe)[1])  # stage 2's documents
    assert int(counted.stdout) == sum(map(len, generated.values())) == 13  # one request per document
    # one request at a time: lm-eval's bar moves after each (as one batch of 13 it sat at 0/13 for minutes)
    (stage2,) = [line for line in recipe.splitlines() if "--apply_chat_template" in line and "--gen_kwargs" in line]
    assert "--batch_size 1 " in stage2 and "lm-eval's bar moves after each" in recipe
    # no NLI judge runs offline: the banner says so and names the smallest, which docs/serving.md explains
    (judge,) = re.findall(r"smallest: seqcls:(\S+) \(docs/serving.md\)", recipe)
    serving = (REPO / "docs" / "serving.md").read_text(encoding="utf-8")
    assert "## A judge on a CPU, offline" in serving and f'"seqcls:{judge}"' in serving


def _smoke_test() -> tuple[str, list[str], dict[str, list[int]]]:
    """The README's CPU smoke test: its section's text, the tasks its command runs (groups
    expanded as their YAMLs list them) and its ``--samples``."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("**On a CPU first?**") : text.index("**Several GPUs**")]
    command = section.split("```bash\n", 1)[1].split("```", 1)[0]
    groups = {}
    for path in TASKS_DIR.glob("*/*.yaml"):
        config = yaml.safe_load(path.read_text()) if "\ngroup:" in "\n" + path.read_text() else None
        if config:
            groups[config["group"]] = config["task"]
    named = re.search(r"--tasks (\S+)", command).group(1).split(",")
    tasks = [task for name in named for task in groups.get(name, [name])]
    return section, tasks, json.loads(re.search(r"--samples '([^']*)'", command).group(1))


def test_the_readme_smoke_test_states_the_offline_facts_and_picks_each_tasks_documents() -> None:
    section, tasks, samples = _smoke_test()
    assert "export EXPLAIN_EVAL_DATA=" in section and "HF_HUB_OFFLINE=1" in section
    assert "1,300 s and 8.5 GB peak memory" in section and "--limit" not in section
    assert sorted(samples) == sorted(tasks)  # a task missing from --samples would run all its documents


@pytest.mark.fulldata
def test_the_readme_smoke_test_shows_every_gold_label(full_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The smoke test's documents, as lm-eval indexes the real tasks: GEESE pairs of every gold
    label in each setting (``--limit 4`` took only gold-YES pairs: an accuracy of 1.0 said
    nothing), IBE training and test questions, each with its correct and its wrong option."""
    from lm_eval.tasks import TaskManager

    from custom_metrics.geese.data import LABELS

    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(full_data))
    _, tasks, samples = _smoke_test()
    names = [task for task in tasks if task.startswith(("geese_", "ibe_"))]
    loaded = TaskManager(include_path=str(TASKS_DIR), include_defaults=False).load(names)["tasks"]
    for name in names:
        docs = list(loaded[name].test_docs())
        picked = [docs[index] for index in samples[name]]
        if name.startswith("geese_"):
            assert {doc["label"] for doc in picked} == set(LABELS), name
        else:
            assert {(doc["split"], doc["correct"]) for doc in picked} == {
                (split, correct) for split in ("train", "test") for correct in (0, 1)
            }, name


def test_the_readmes_harness_commands_check_first() -> None:
    """Every run in the README's code blocks goes through ``explain-eval lm-eval`` (or its module
    under ``accelerate launch``), whose one-line checks come before the model loads; plain
    ``lm_eval`` would meet a misspelt task or a missing model path as a traceback."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    runs = [line for block in blocks for line in block.splitlines() if "--tasks" in line or "--model " in line]
    assert runs, "no harness command found in the README's code blocks"
    starts = [line for line in runs if re.search(r"(^|\s)(explain-eval lm-eval|lm_eval|-m \S+) --model", line)]
    assert starts and all(
        "explain-eval lm-eval --model" in line or "-m custom_metrics.lm_eval_cli --model" in line for line in starts
    ), starts
