"""``rule-protocol`` checks its harness arguments before it writes any state or starts
``lm_eval``, and a folder in which no split finished takes new settings.

Before, ``rule-protocol --output-path DIR --limit 2`` (no model arguments) recorded its
settings, started ``lm_eval``, printed two tracebacks (HFLM without ``pretrained``,
CalledProcessError), and then refused the corrected command: "DIR holds a protocol run with
other settings", though no split had finished. Each case goes through ``explain-eval``'s
main with ``subprocess.run`` of the protocol replaced, so a started ``lm_eval`` is seen.
"""

from __future__ import annotations

import json
import subprocess

import pytest

import custom_metrics.rule.protocol as protocol
from custom_metrics.cli import main as cli
from custom_metrics.rule.protocol import ARGS_FILE


@pytest.fixture
def started(monkeypatch) -> list[list[str]]:
    """The lm_eval commands the protocol starts; each 'fails' at once (exit 1), writing nothing."""
    commands: list[list[str]] = []

    def run(command: list[str], *args, **kwargs) -> subprocess.CompletedProcess:
        commands.append(command)
        return subprocess.CompletedProcess(command, 1)

    monkeypatch.setattr(protocol.subprocess, "run", run)
    return commands


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (["--limit", "2"], "--model hf needs 'pretrained' in --model_args: pass --model_args pretrained="),
        (["--model", "hf", "--model_args", "pretrianed=x"], "needs 'pretrained' in --model_args (did you mean 'pretri"),
        (["--model", "hf", "--model_args", "pretrained=/no/such/model"], "pretrained=/no/such/model: no such folder"),
        (["--model", "hff"], "--model hff: not a model lm-eval knows (did you mean 'hf'"),
        (["--model", "dummy", "--limt", "2"], "lm_eval would refuse these arguments: unrecognized arguments: --limt 2"),
        (["--model", "dummy", "--limit", "0"], "--limit 0.0: pass a whole number of docs of at least 1"),
        (["--model", "dummy", "--batch_size", "0"], "--batch_size '0': pass a whole number of at least 1"),
        (["--model", "dummy", "--num_fewshot", "3"], "itself; remove --num_fewshot."),
        (["--model", "dummy", "-t", "rule", "--log_sample"], "itself; remove --log_samples, --tasks."),  # alias, prefix
    ],
)
def test_bad_harness_arguments_stop_before_any_state_or_lm_eval(tmp_path, capsys, started, arguments, says) -> None:
    out = tmp_path / "rule5"
    code = cli(["rule-protocol", "--output-path", str(out), *arguments])
    err = capsys.readouterr().err
    assert code == 2 and says in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert started == [] and not out.exists()  # no lm_eval started, no settings recorded


def test_tasks_missing_from_the_include_path_stop_the_protocol(tmp_path, capsys, started) -> None:
    out = tmp_path / "o"
    code = cli(["rule-protocol", "--output-path", str(out), "--model", "dummy", "--include-path", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "unknown task(s) 'rule_5shot_split1'" in err and started == [] and not out.exists(), err


def test_a_folder_where_no_split_finished_takes_the_corrected_settings(tmp_path, capsys, started) -> None:
    out = tmp_path / "rule5"
    out.mkdir()
    # What the uncorrected command left: its settings, and a split folder lm_eval never finished.
    (out / ARGS_FILE).write_text(json.dumps({"shots": 5, "lm_eval_args": ["--limit", "2"]}))
    (out / "split1" / "model").mkdir(parents=True)
    code = cli(["rule-protocol", "--output-path", str(out), "--model", "dummy", "--limit", "2"])
    err = capsys.readouterr().err
    assert "other settings" not in err and "no split finished with the earlier settings" in err, err
    assert json.loads((out / ARGS_FILE).read_text())["lm_eval_args"] == ["--model", "dummy", "--limit", "2"]
    assert [command[3:7] for command in started] == [["--model", "dummy", "--limit", "2"]]
    # The harness failing is one line that says the finished splits are kept, not a traceback.
    assert code == 2 and "lm_eval exited 1 on rule_5shot_split1" in err and "Traceback" not in err


def test_a_folder_with_a_finished_split_keeps_refusing_other_settings(tmp_path, monkeypatch, started) -> None:
    out = tmp_path / "rule5"
    out.mkdir()
    (out / ARGS_FILE).write_text(json.dumps({"shots": 5, "lm_eval_args": ["--model", "dummy", "--limit", "3"]}))
    (out / "split1" / "m").mkdir(parents=True)
    (out / "split1" / "m" / "samples_rule_5shot_split1_2026-01-01T00-00-00.000000.jsonl").touch()
    monkeypatch.setattr(protocol, "finished_samples", lambda folder, task: ([], {}))  # a split that finished
    with pytest.raises(SystemExit, match="holds a protocol run with other settings"):
        protocol.run_protocol(out, ["--model", "dummy", "--limit", "2"], 5, protocol.TASKS_PATH, "reclor")
    assert started == []
