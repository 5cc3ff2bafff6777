"""Data loading: public source by default, the mirror on request, clear errors otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

import custom_metrics.geese.data as geese_data
from custom_metrics.common.errors import DataError
from custom_metrics.common.jsonl import read_jsonl
from custom_metrics.common.settings import DATA_ENV
from custom_metrics.common.sources import Source, load_rows


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


def test_public_source_is_the_hub_dataset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    calls: list[tuple] = []
    row = {field: "x" for field in geese_data.FIELDS} | {"label": "YES"}

    def fake_load_dataset(path: str, split: str | None = None, **kwargs) -> datasets.Dataset:
        calls.append((path, split))
        return datasets.Dataset.from_list([row])

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    assert geese_data.load_docs() == [row]
    assert calls == [("azaninello/explained-full-llama-3", "test")]


def test_offline_without_mirror_names_dataset_and_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    with pytest.raises(DataError) as err:
        geese_data.load_docs()  # HF_HUB_OFFLINE=1 in the tests: the Hub load fails fast
    message = str(err.value)
    assert "azaninello/explained-full-llama-3" in message and DATA_ENV in message
    assert "geese/explained-full-llama-3/test.jsonl" in message


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


def test_bad_label_is_reported_with_its_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "geese/explained-full-llama-3/test.jsonl"
    target.parent.mkdir(parents=True)
    row = {field: "x" for field in geese_data.FIELDS} | {"id": "9", "label": "MAYBE"}
    target.write_text(json.dumps(row) + "\n")
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    with pytest.raises(DataError, match=r"test.jsonl:1: field 'label' is 'MAYBE'"):
        geese_data.load_docs()


def test_url_sources_go_through_datasets_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)
    seen: dict = {}

    def fake_load_dataset(path: str, data_files: str | None = None, split: str | None = None, **kwargs):
        seen.update(path=path, data_files=data_files, split=split)
        return datasets.Dataset.from_list([{"a": 1}])

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    source = Source(name="demo", mirror_path="demo/x.jsonl", url="https://example.org/x.jsonl")
    assert load_rows(source, required=["a"]) == [{"a": 1}]
    assert seen == {"path": "json", "data_files": "https://example.org/x.jsonl", "split": "train"}


def test_public_copa_comes_from_the_pinned_tarball(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tarfile

    from custom_metrics.ibe import data as ibe_data
    from tests.helpers import MIRROR

    archive = tmp_path / "COPA-resources.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(MIRROR / "copa/copa-dev.xml", arcname="COPA-resources/datasets/copa-dev.xml")
    requested: list[str] = []
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.setattr(ibe_data, "download", lambda source: requested.append(source.url) or archive)
    items = ibe_data.load_copa("dev")
    assert requested == [ibe_data.COPA_TGZ_URL] and "9af88e4a2447e59afb220ade82b4a355da8fa1d6" in requested[0]
    assert len(items) == 4
    with pytest.raises(DataError, match=r"copa-test\.xml is missing"):
        ibe_data.load_copa("test")


def test_failed_download_names_url_and_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from custom_metrics.common.sources import fetch_file

    monkeypatch.delenv(DATA_ENV, raising=False)
    source = Source(
        name="RULE prompts", mirror_path="rule/prompt/prompts.json", url="https://example.invalid/prompts.json"
    )
    with pytest.raises(
        DataError,
        match=r"RULE prompts: could not download https://example.invalid/prompts.json "
        r".*EXPLAIN_EVAL_DATA.*rule/prompt/prompts.json",
    ):
        fetch_file(source)
