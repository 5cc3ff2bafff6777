"""Data loading: the mirror on request, GEESE's choice of public source, clear errors otherwise.

The download of pinned files is tested against a real server in test_download.py and, with
the real pinned bytes, in test_pinned_data.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

import custom_metrics.geese.data as geese_data
from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import read_json, read_jsonl
from custom_metrics.common.settings import CACHE_ENV, DATA_ENV, GITHUB_RAW_ENV
from custom_metrics.common.sources import rows_fingerprint
from custom_metrics.geese.data import GEESE_SOURCE_ENV
from tests.helpers import MIRROR


def test_mirror_is_used_when_the_variable_is_set(
    fixture_mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # loading must not depend on the working directory
    docs = geese_data.load_docs()
    assert len(docs) == 6 and {doc["label"] for doc in docs} == {"YES", "NO", "UNKNOWN"}


def test_relative_mirror_path_is_resolved(fixture_mirror: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(fixture_mirror.parent)
    monkeypatch.setenv(DATA_ENV, "mirror")
    assert len(geese_data.load_docs()) == 6


def test_mirror_without_the_file_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    with pytest.raises(DataError, match=f"{tmp_path}/geese/explained-full-llama-3/test.jsonl does not exist"):
        geese_data.load_docs()
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "missing"))
    with pytest.raises(DataError, match="is not a directory"):
        geese_data.load_docs()


def test_bad_rows_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"id": "1", "text": "a"}) + "\n\n" + json.dumps({"id": "2"}) + "\n")
    with pytest.raises(DataError, match=r"rows.jsonl:3: missing field\(s\) 'text'"):
        read_jsonl(path, required=["id", "text"])
    path.write_text('{"id": "1"}\n[1, 2]\n')
    with pytest.raises(DataError, match=r"rows.jsonl:2: expected a JSON object"):
        read_jsonl(path)
    path.write_text("")
    with pytest.raises(DataError, match="holds no rows"):
        read_jsonl(path)
    path.write_text('{"5shots": [\n  {"name": "vanilla",}\n]}')
    with pytest.raises(DataError, match=r"rows.jsonl:2: not valid JSON"):
        read_json(path)


def test_bad_label_is_reported_with_its_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "geese/explained-full-llama-3/test.jsonl"
    target.parent.mkdir(parents=True)
    row = {field: "x" for field in geese_data.FIELDS} | {"id": "9", "label": "MAYBE"}
    target.write_text(json.dumps(row) + "\n")
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    with pytest.raises(DataError, match=r"test.jsonl:1: field 'label' is 'MAYBE'"):
        geese_data.load_docs()


def test_public_default_offline_names_the_pinned_file_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.delenv(GEESE_SOURCE_ENV, raising=False)
    monkeypatch.delenv(GITHUB_RAW_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataError) as err:
        geese_data.load_docs()
    message = str(err.value)
    assert message.startswith("GEESE (e-RTE-3-it explained, test): ")
    assert (
        "HF_HUB_OFFLINE=1 forbids downloading https://raw.githubusercontent.com/andreazaninello/calamita-geese/"
        in message
    )
    assert "de12d080de5a44c56c8d54e5335a6eff50e7bf14/scripts/explained_data/data-00000-of-00001.arrow" in message
    assert "explain-eval download" in message and "geese/explained-full-llama-3/test.jsonl" in message


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("github", None),
        ("hub", ("azaninello/explained-full-llama-3", None)),
        ("hub@0123abc", ("azaninello/explained-full-llama-3", "0123abc")),
        ("hub:someone/fork", ("someone/fork", None)),
        ("hub:someone/fork@v1.0", ("someone/fork", "v1.0")),
    ],
)
def test_geese_source_settings(setting: str, expected: tuple | None) -> None:
    hub = geese_data.hub_choice(setting)
    assert (hub and (hub.id, hub.revision)) == expected
    assert hub is None or (hub.split, hub.fingerprint) == ("test", geese_data.ROWS_FINGERPRINT)


def test_geese_source_comes_from_metadata_or_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(GEESE_SOURCE_ENV, "hub@r1")
    assert geese_data.hub_choice().revision == "r1"
    assert geese_data.hub_choice("github") is None  # --metadata wins over the variable
    monkeypatch.setenv(GEESE_SOURCE_ENV, "huggingface")
    with pytest.raises(
        DataError, match=rf"data source 'huggingface' \(metadata 'geese_source' or {GEESE_SOURCE_ENV}\)"
    ):
        geese_data.hub_choice()


def test_unreachable_hub_says_so_and_names_the_pinned_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.delenv(GITHUB_RAW_ENV, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the real Hub client, refusing the network
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf")
    with pytest.raises(DataError) as err:
        geese_data.load_docs("hub@0123abc")
    message = str(err.value)
    assert "could not load the Hub dataset azaninello/explained-full-llama-3@0123abc (split test)" in message
    assert "HF_HUB_OFFLINE=1 is set" in message and "no longer public" in message
    assert (
        "The pinned default is the GitHub file https://raw.githubusercontent.com/andreazaninello/calamita-geese/"
        in message
    )
    assert f"unset {GEESE_SOURCE_ENV} and drop the metadata 'geese_source'" in message


def test_hub_rows_that_differ_from_the_pinned_content_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local dataset folder stands in for a re-uploaded Hub dataset: same loader, other rows."""
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf")
    folder = tmp_path / "reuploaded"
    folder.mkdir()
    (folder / "test.jsonl").write_bytes((MIRROR / "geese/explained-full-llama-3/test.jsonl").read_bytes())
    rows = read_jsonl(folder / "test.jsonl")
    with pytest.raises(DataError) as err:
        geese_data.load_docs(f"hub:{folder}")
    message = str(err.value)
    assert f"the Hub dataset {folder}@main (split test) is not the pinned content: its 6 rows" in message
    assert f"fingerprint {rows_fingerprint(rows)}, expected {geese_data.ROWS_FINGERPRINT}" in message
    assert "Results would not be comparable" in message


def test_mirror_wins_over_a_hub_choice(fixture_mirror: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(GEESE_SOURCE_ENV, "hub")
    assert len(geese_data.load_docs()) == 6


def test_geese_source_reaches_the_loader_through_task_metadata(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--metadata '{"geese_source": ...}'`` travels through the harness to the GEESE loader."""
    from lm_eval.tasks import TaskManager

    from custom_metrics.common.harness_api import evaluation_docs
    from tests.helpers import TASKS_DIR

    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.delenv(GEESE_SOURCE_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    manager = TaskManager(include_path=str(TASKS_DIR), include_defaults=False, metadata={"geese_source": "hub@abc"})
    with pytest.raises(DataError, match=r"could not load the Hub dataset azaninello/explained-full-llama-3@abc"):
        evaluation_docs(manager.load(["geese_human"])["tasks"]["geese_human"])


def test_download_checks_the_hub_copy_chosen_instead_of_the_pinned_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """``explain-eval download geese`` with a Hub copy chosen loads it and refuses other rows, through
    the stand-in GEESE's source declares (the command names no paper)."""
    from custom_metrics.pinned import main

    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv(GITHUB_RAW_ENV, "http://127.0.0.1:9")  # the pinned file cannot come: named, the copy checked
    monkeypatch.setenv("EXPLAIN_EVAL_DOWNLOAD_RETRIES", "0")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf")
    folder = tmp_path / "reuploaded"
    folder.mkdir()
    (folder / "test.jsonl").write_bytes((MIRROR / "geese/explained-full-llama-3/test.jsonl").read_bytes())
    monkeypatch.setenv(GEESE_SOURCE_ENV, f"hub:{folder}")
    assert main(["geese"]) == 1
    failed = [line for line in capsys.readouterr().err.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 2 and "GEESE (e-RTE-3-it explained, test): could not download" in failed[0]
    assert f"the Hub dataset {folder}@main (split test) is not the pinned content: its 6 rows" in failed[1]
