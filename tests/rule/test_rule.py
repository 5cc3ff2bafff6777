"""RULE docs, prompts and data checks on the synthetic fixture (tests/fixtures/rule)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

import custom_metrics.rule.data as rule_data
import custom_metrics.rule.metrics as rule_metrics
import custom_metrics.rule.prompts as rule_prompts
import custom_metrics.rule.variants as rule_variants
from custom_metrics.common.errors import DataError
from tests.helpers import MIRROR


@pytest.fixture()
def fixture_data(monkeypatch) -> Path:
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))
    return MIRROR


def by_id(docs: list[dict]) -> dict[str, dict]:
    return {doc["doc_id"]: doc for doc in docs}


def test_prompt_pinned_for_one_subquestion(fixture_data):
    doc = by_id(rule_variants.docs_for("combined"))["syn_1_sub1"]
    assert doc["prompt"] == (
        "In this task, you are expected to answer the multiple-choice question about the given context. "
        "The question has only one correct answer. \n"
        "Context: Mayor: Our town library should open on Sundays, because visits rose whenever "
        "opening hours were extended. \n"
        " Question: Why is it not correct that extending hours never costs money? \n"
        " Option0: Costs are not part of the argument. \n"
        " Option1: If Sunday visitors only moved from other days, total visits would not rise. \n"
        " Option2: The argument does not compare libraries and parks. \n"
        " Option3: The argument concerns one town only. \n"
        " Answer: The answer is Option"
    )
    assert (doc["label"], doc["kind"], doc["main_id"], doc["split"], doc["group_size"]) == (
        0,
        "eliminative",
        "syn_1",
        1,
        4,
    )


def test_combined_docs_group_each_main_question_with_its_subquestions(fixture_data):
    docs = rule_variants.docs_for("combined")
    assert [d["doc_id"] for d in docs[:6]] == ["syn_1", "syn_1_sub1", "syn_1_sub2", "syn_1_sub3", "syn_1_sub4", "syn_2"]
    assert Counter(d["kind"] for d in docs) == {"main": 6, "selective": 6, "eliminative": 9}
    assert sum(d["none_gold"] for d in docs) == 2
    assert len(rule_variants.docs_for("main")) == 6 and len(rule_variants.docs_for("sub")) == 15


def test_selective_means_about_the_correct_main_option(fixture_data):
    mains = {m.id: m for m in rule_data.main_questions()}
    for sub in rule_data.all_sub_questions():
        assert sub.selective == (sub.option_index == mains[sub.main_id].label)


def test_fewshot_split_uses_its_demonstration_set_and_excludes_demonstrated_mains(fixture_data):
    demo = rule_data.demo_sets()[1]  # set 2: every fixture main but syn_2
    docs = rule_variants.docs_for("fewshot", 2)
    assert [d["doc_id"] for d in docs] == ["syn_1_sub4", "syn_2", "syn_2_sub1", "syn_6_sub3"]
    assert {d["split"] for d in docs if d["kind"] != "main"} == {2}
    main = by_id(docs)["syn_2"]
    block = main["prompt"][len(rule_prompts.INSTRUCTION + demo.prompt) :]
    assert main["prompt"].startswith(rule_prompts.INSTRUCTION + demo.prompt + " Context: Critic:")
    assert block.endswith("Option3: draws a conclusion about a group from one member \n Answer: The answer is Option")
    assert by_id(docs)["syn_1_sub4"]["group_size"] == 1  # syn_1 has one subquestion in split 2


def test_demonstration_layout_reproduces_the_prompt_file(fixture_data):
    document = json.loads((MIRROR / "rule/prompt/prompts.json").read_text())
    for (demos, shots), key in [(("reclor", 5), "5shots"), (("rule", 5), "5shots"), (("reclor", 1), "1shot")]:
        entry = next(e["prompt"] for e in document[key] if e["name"] == rule_data.DEMOS[demos])
        fields = zip(entry["context"][0], entry["question"][0], entry["options"][0], entry["label"][0])
        rebuilt = rule_prompts.demonstrations([rule_prompts.demonstration(c, q, o, int(k)) for c, q, o, k in fields])
        assert rebuilt == rule_data.demo_sets(demos, shots)[0].prompt


def test_rule_demonstrations_count_none_in_shot_and_exclude_nothing(fixture_data):
    """RULE (subquestion) demonstrations: Table 3's "# None in shot" per set; every split doc evaluated."""
    sets = rule_data.demo_sets("rule")
    assert [s.none_gold for s in sets] == [0, 0, 0, 1, 1]
    assert all(s.main_ids == () for s in sets)
    assert [s.none_gold for s in rule_data.demo_sets("reclor")] == [0, 0, 0, 0, 0]
    docs = rule_variants.docs_for("fewshot", 2, "rule")
    assert [d["doc_id"] for d in docs] == [
        "syn_1",
        "syn_1_sub4",
        "syn_2",
        "syn_2_sub1",
        "syn_3",
        "syn_4",
        "syn_5",
        "syn_6",
        "syn_6_sub3",
    ]
    assert all(d["prompt"].startswith(rule_prompts.INSTRUCTION + sets[1].prompt + " Context: ") for d in docs)
    with pytest.raises(DataError, match="unknown RULE demonstrations 'gsm8k'"):
        rule_variants.docs_for("fewshot", 2, "gsm8k")


def test_context_ablation_drops_only_the_context_line(fixture_data):
    full = by_id(rule_variants.docs_for("combined"))["syn_2_sub1"]["prompt"]
    ablated = by_id(rule_variants.docs_for("combined_noctx"))["syn_2_sub1"]["prompt"]
    context_line = (
        "Context: Critic: The new bridge design is unsafe, since its architect has never designed a bridge before. \n "
    )
    assert context_line in full
    assert ablated == full.replace(context_line, "")


def test_rationale_settings_share_one_subset_and_append_gold_subanswers(fixture_data):
    sets = {s: by_id(rule_variants.rationale_docs(s)) for s in rule_variants.RATIONALE_SETTINGS}
    # syn_1: selective + eliminative rationales (sub4's gold is None: no rationale for option 3);
    # syn_2 and syn_5 lack one kind; syn_3's eliminative sub has a None gold.
    assert all(sorted(docs) == ["syn_1", "syn_4", "syn_5", "syn_6"] for docs in sets.values())
    selective = "If Sunday visitors only moved from other days, total visits would not rise."
    eliminative = "Costs are not part of the argument. The argument does not compare libraries and parks."
    assert "Rationale:" not in sets["none"]["syn_1"]["prompt"]
    assert f" \n Rationale: {selective} \n Answer: The answer is Option" in sets["selective"]["syn_1"]["prompt"]
    assert f" \n Rationale: {eliminative} \n Answer:" in sets["eliminative"]["syn_1"]["prompt"]
    both = (
        "Costs are not part of the argument. If Sunday visitors only moved from other days, total visits "
        "would not rise. The argument does not compare libraries and parks."
    )
    assert f" \n Rationale: {both} \n Answer:" in sets["both"]["syn_1"]["prompt"]
    assert sets["none"]["syn_1"]["prompt"] == by_id(rule_variants.docs_for("main"))["syn_1"]["prompt"]


def test_alignment_doc_shows_main_question_one_option_and_the_rationales(fixture_data):
    doc = by_id(rule_variants.docs_for("alignment"))["syn_3_sub3"]
    assert doc["prompt"].startswith(rule_prompts.ALIGNMENT_INSTRUCTION + "Context: Farmer:")
    assert (
        " \n Question: Which one of the following, if true, most weakens the farmer's argument? "
        "\n Option: Neighbouring farms irrigate their fields. \n Rationale0:" in doc["prompt"]
    )
    assert doc["prompt"].endswith("Rationale3: None of the above choices \n Answer: The answer is Rationale")
    assert (doc["kind"], doc["label"], doc["none_gold"]) == ("eliminative", 3, True)


def test_unknown_variant_and_split_are_clear_errors(fixture_data):
    with pytest.raises(DataError, match="unknown RULE variant 'mainq'"):
        rule_variants.docs_for("mainq")
    with pytest.raises(DataError, match="dataset_kwargs 'split' in"):
        rule_variants.docs_for("fewshot", 7)


def broken_mirror(tmp_path: Path, split_file: str, edit) -> Path:
    shutil.copytree(MIRROR / "rule", tmp_path / "rule")
    path = tmp_path / "rule/eval_data" / split_file
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    edit(rows)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return tmp_path


@pytest.mark.parametrize(
    ("field", "edit", "message"),
    [
        ("label", lambda rows: rows[1].update(label=4), r"subq_split_1.jsonl row 2: field 'label' is 4"),
        (
            "main_option_correctness",
            lambda rows: rows[0].update(main_option_correctness=True),
            r"row 1: field 'main_option_correctness'",
        ),
        (
            "main_id",
            lambda rows: rows[2].update(id="syn_99_sub3", main_id="syn_99"),
            r"row 3: field 'main_id' 'syn_99'",
        ),
        ("id", lambda rows: rows[0].update(id="syn_1_sub9"), r"row 1: field 'id' is 'syn_1_sub9'"),
        ("answer2", lambda rows: rows[0].pop("answer2"), r"subq_split_1.jsonl:1: missing field\(s\) 'answer2'"),
    ],
)
def test_bad_rows_name_file_row_and_field(tmp_path, monkeypatch, field, edit, message):
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(broken_mirror(tmp_path, "subq_split_1.jsonl", edit)))
    with pytest.raises(DataError, match=message):
        rule_data.sub_questions(1)


def test_missing_mirror_file_names_the_expected_path(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(tmp_path))
    with pytest.raises(DataError, match=r"rule/eval_data/mainq\.jsonl"):
        rule_data.main_questions()


def test_public_source_is_pinned_to_the_papers_commit(monkeypatch):
    monkeypatch.delenv("EXPLAIN_EVAL_GITHUB_RAW", raising=False)
    assert rule_data.MAIN_SOURCE.remote.url() == (
        "https://raw.githubusercontent.com/nii-cl/rule/ace6fb67c1000e9ccb955a1efca5893ee1d4c032/data/eval_data/mainq.jsonl"
    )
    assert rule_data.PROMPTS_SOURCE.remote.url().endswith(
        "ace6fb67c1000e9ccb955a1efca5893ee1d4c032/data/prompt/prompts.json"
    )


def test_scoring_picks_the_most_likely_option_digit():
    doc = {
        "doc_id": "x_sub1",
        "main_id": "x",
        "kind": "selective",
        "split": 3,
        "label": 2,
        "none_gold": False,
        "group_size": 2,
    }
    scores = rule_metrics.process_sub(doc, [(-3.0, False), (-2.0, False), (-0.5, True), (-4.0, False)])
    assert set(scores) == set(rule_metrics.SUB_METRICS)
    assert scores["subq_acc"].correct and scores["subq_acc"].split == 3
    assert set(rule_metrics.process_combined(doc, [(-1.0, True)] * 4)) == set(rule_metrics.COMBINED_METRICS)
    assert not rule_metrics.process_main(
        {**doc, "kind": "main"}, [(-0.1, True), (-2.0, False), (-3.0, False), (-4.0, False)]
    )["mainq_acc"].correct
