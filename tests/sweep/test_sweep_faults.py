"""The sweep on a folder others can touch: a folder under ``--out`` planted as a link to someone
else's folder, a full disk, a run record edited by hand. Each is refused in one line naming it
(the pair fails, the sweep goes on) and leaves nothing behind: the linked folder's files are
neither renamed nor written to, no temporary file stays, no process is waited on for ever."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

import custom_metrics.sweep.runner as sweep
from custom_metrics.sweep import batch, child
from custom_metrics.sweep.runner import SweepOptions
from tests.helpers import fill_disk, tmpfs
from tests.sweep import fakes

TASKS = ["geese_noexp", "geese_human"]  # two pending tasks: one shared lm_eval (OUT/<model>/_batch)


@pytest.fixture()
def ran(monkeypatch, tmp_path: Path):
    """lm_eval replaced by tests/sweep/fakes.py; returns the (model, tasks) runs since the last call."""
    monkeypatch.setattr(sweep, "lm_eval_command", fakes.fake_lm_eval_command)
    return lambda: fakes.ran(options(tmp_path))


def options(tmp_path: Path, tasks: list[str] = TASKS) -> SweepOptions:
    return SweepOptions(models=sweep.parse_models("a::pretrained=x"), tasks=tasks, out=tmp_path / "sweep")


def _someone_elses(folder: Path) -> dict[str, str]:
    """A folder of another run's outputs, as the sweep would find (and set aside) in a pair folder."""
    (folder / "geese_noexp" / "org__model").mkdir(parents=True)
    (folder / "geese_noexp" / "org__model" / "results_old.json").write_text('{"results": {}}')
    (folder / "samples_geese_noexp_old.jsonl").write_text("{}\n")
    return _tree(folder)


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


# (where the link is, below OUT; the tasks whose pairs must fail; the tasks that still run)
LINKS = {
    "a pair folder": ("a/geese_noexp", ["geese_noexp"], ["geese_human"]),
    "a model folder": ("a", TASKS, []),
    "a folder inside a pair": ("a/geese_noexp/org__model", ["geese_noexp"], ["geese_human"]),
    "the model's shared-run folder": ("a/_batch", [], TASKS),
}


@pytest.mark.parametrize("where", LINKS)
def test_a_linked_folder_anywhere_under_out_is_refused_and_its_target_untouched(
    tmp_path: Path, ran, where: str
) -> None:
    """A pair folder linked to a folder outside ``--out``: the sweep exited 0 after renaming that
    folder's results and samples (recursively) to ``*.incomplete`` and writing its own there."""
    link, failing, running = LINKS[where]
    outside = tmp_path / "someone-else"
    before = _someone_elses(outside)
    opts = options(tmp_path)
    (opts.out / link).parent.mkdir(parents=True, exist_ok=True)
    (opts.out / link).symlink_to(outside, target_is_directory=True)
    outcomes = {outcome.task: outcome for outcome in batch.run_sweep(opts)}
    assert _tree(outside) == before  # nothing renamed, nothing written
    for task in failing:
        detail = outcomes[task].detail
        assert outcomes[task].status == "failed" and "\n" not in detail, detail
        assert detail.startswith(f"{opts.out / link}: is a symbolic link; the sweep walks, renames and writes nothing")
    assert [task for task in TASKS if outcomes[task].status == "done"] == running
    assert sorted(task for _, tasks in ran() for task in tasks.split(",")) == sorted(running)


def test_a_linked_pair_folder_is_refused_before_a_cluster_submits_it(tmp_path: Path) -> None:
    pytest.importorskip("submitit", reason="submitit is the [cluster] extra: pip install -e '.[cluster]'")
    from custom_metrics.sweep.cluster import run_cluster_sweep
    from custom_metrics.sweep.resources import ResourcePlan
    from tests.sweep.local_scheduler import LocalScheduler

    outside = tmp_path / "someone-else"
    before = _someone_elses(outside)
    opts = options(tmp_path, ["geese_noexp"])
    (opts.out / "a").mkdir(parents=True)
    (opts.out / "a" / "geese_noexp").symlink_to(outside, target_is_directory=True)
    scheduler = LocalScheduler()
    (outcome,) = run_cluster_sweep(opts, scheduler, ResourcePlan(), job=fakes.model_job_with_fake_lm_eval, poll_s=0.2)
    assert outcome.status == "failed" and outcome.detail.startswith(f"{opts.out / 'a' / 'geese_noexp'}: is a symbolic")
    assert _tree(outside) == before and scheduler.requests == []


def test_a_full_disk_leaves_no_temporary_record_behind(tmp_path: Path, ran) -> None:
    """``sweep_pair.json.<pid>.<ns>.tmp`` stayed beside the pair when the disk was full."""
    with tmpfs(tmp_path / "disk", "size=64k") as disk:
        opts = SweepOptions(models=sweep.parse_models("a::pretrained=x"), tasks=["geese_noexp"], out=disk / "sweep")
        opts.out.mkdir()
        (opts.out / ".sweep.lock").write_text("a sweep of yesterday\n")  # the lock's line has its block
        fill_disk(disk / "filler")
        with pytest.raises(OSError) as caught:
            batch.run_sweep(opts)
        assert caught.value.errno == 28  # ENOSPC, shown in one line by the command (custom_metrics/cli.py)
        left = [str(path.relative_to(disk)) for path in disk.rglob("*") if ".tmp" in path.name]
        assert left == [] and ran() == []


HOST = socket.gethostname()


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("process_group", 2**70, f"process_group is {2**70}, not a process id (a whole number from 1 to"),
        ("process_group", "12", "process_group is '12', not a process id"),
        ("process_group", -7, "process_group is -7, not a process id"),
        ("process_group", 0, "process_group is 0, not a process id"),
        ("process_group", True, "process_group is True, not a process id"),
        ("pid", 2**70, f"pid is {2**70}, not a process id"),
    ],
)
def test_a_run_record_edited_by_hand_is_refused_naming_file_and_field(
    tmp_path: Path, ran, field: str, value: object, says: str
) -> None:
    """A process group of 2**70 or a string gave a traceback, -7 an "Invalid argument" and 0 an
    endless wait on the sweep's own group (with the advice `kill -- -0`)."""
    opts = options(tmp_path, ["geese_noexp"])
    folder = sweep.pair_folder(opts.out, opts.models[0], "geese_noexp")
    folder.mkdir(parents=True)
    record = {"host": HOST, "boot": "", "pid": os.getpid(), "start_ticks": 1, "command": ["lm_eval"], field: value}
    (folder / child.RUN_FILE).write_text(json.dumps(record))

    def say(text: str) -> None:
        assert "still runs" not in text, f"the sweep waits: {text}"

    outcome = sweep.settle_earlier_run(opts, opts.models[0], "geese_noexp", folder, say)
    assert outcome is not None and outcome.status == "failed" and "\n" not in outcome.detail, outcome
    assert outcome.detail.startswith(f"{folder / child.RUN_FILE}: {says}"), outcome.detail
    (outcome,) = batch.run_sweep(opts)  # the sweep: the pair fails with that line, nothing runs, the record stays
    assert outcome.status == "failed" and says in outcome.detail and ran() == []
    assert (folder / child.RUN_FILE).is_file()
