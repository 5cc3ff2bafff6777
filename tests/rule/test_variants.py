"""The one-shot, chain-of-thought and five-prompt variants (Tables 5-7 and 9) on the synthetic
fixture, whose prompt file holds every published entry in the published layout."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

import custom_metrics.rule.data as rule_data
import custom_metrics.rule.prompts as rule_prompts
import custom_metrics.rule.variants as rule_variants
from custom_metrics.common.errors import DataError
from custom_metrics.rule.answers import read_answer
from custom_metrics.rule.protocol import task_name
from tests.helpers import MIRROR, TASKS_DIR

COT_END = re.compile(r"Therefore the answer is Option(\d) \n ?$")


@pytest.fixture(autouse=True)
def fixture_data(monkeypatch) -> None:
    monkeypatch.setenv("EXPLAIN_EVAL_DATA", str(MIRROR))


def ids(docs: list[dict]) -> list[str]:
    return [doc["doc_id"] for doc in docs]


def test_one_shot_runs_leave_out_the_one_demonstrated_main_question() -> None:
    shown = rule_data.demo_sets("reclor", 1)[1]  # 1shot set 2: syn_3, as 5shots set 1's second demonstration
    assert shown.main_ids == ("syn_3",) and shown.prompt.count("Context:") == 1
    docs = rule_variants.docs_for("fewshot", 2, "reclor", 1)
    assert ids(docs) == ["syn_1", "syn_1_sub4", "syn_2", "syn_2_sub1", "syn_4", "syn_5", "syn_6", "syn_6_sub3"]
    assert all(doc["prompt"].startswith(rule_prompts.INSTRUCTION + shown.prompt + " Context: ") for doc in docs)
    on_rule = rule_variants.docs_for("fewshot", 2, "rule", 1)
    assert Counter(doc["kind"] for doc in on_rule)["main"] == 6  # subquestion demonstrations link nothing


def test_chain_of_thought_prompts_end_where_the_model_writes_its_rationale() -> None:
    for shots in rule_data.SHOTS:
        for demos in rule_data.COT_DEMOS:
            shown = rule_data.demo_sets(demos, shots)[0]
            docs = rule_variants.docs_for("fewshot", 1, demos, shots)
            for doc in docs:
                assert doc["prompt"].startswith(rule_prompts.INSTRUCTION + shown.prompt)
                assert doc["prompt"].endswith(" \n Answer:") and not doc["prompt"].endswith("Option")
            assert "syn_2" not in ids(docs) and shown.main_ids[0] == "syn_2"
    # cot_step_complex prompts end in " \n ": the test question follows without another space
    complex_doc = rule_variants.docs_for("fewshot", 1, "cot_complex", 5)[0]["prompt"]
    assert rule_data.demo_sets("cot_complex")[0].prompt.endswith(" \n ") and " \n Context: " in complex_doc
    assert "  Context:" not in complex_doc


def test_every_demonstrated_chain_of_thought_answer_reads_back_as_its_label() -> None:
    """The answer reader agrees with the prompt file: each demonstration's completion names its label."""
    for shots in rule_data.SHOTS:
        for demos in rule_data.COT_DEMOS:
            for shown in rule_data.demo_sets(demos, shots):
                answers = re.split(r" \n Answer:", shown.prompt)[1:]
                assert [read_answer(a.split(" \n Context:")[0]).option for a in answers] == list(shown.labels)
                assert int(COT_END.search(shown.prompt).group(1)) == shown.labels[-1]


def test_a_reclor_question_outside_rule_links_no_main_question() -> None:
    """5shots cot_step_complex set 3 shows one ReClor question RULE does not hold (as the published file)."""
    shown = rule_data.demo_sets("cot_complex")[2]
    assert shown.links == ("syn_1", "syn_2", None, "syn_5", "syn_6") and len(shown.main_ids) == 4
    mains = [d["doc_id"] for d in rule_variants.docs_for("fewshot", 3, "cot_complex") if d["kind"] == "main"]
    assert mains == ["syn_3", "syn_4"]


def test_unknown_shots_are_a_clear_error() -> None:
    with pytest.raises(DataError, match=r"\[1, 5\]-shot prompts, not 3-shot"):
        rule_variants.docs_for("fewshot", 1, "reclor", 3)


def test_five_shot_context_ablation_removes_every_context_line() -> None:
    docs = rule_variants.docs_for("fewshot_noctx")
    assert "Context:" not in "".join(doc["prompt"] for doc in docs)
    by_prompt = Counter(doc["doc_id"].rsplit("@", 1)[1] for doc in docs if doc["kind"] == "main")
    assert by_prompt == {"1": 1, "2": 1, "3": 1, "4": 1, "5": 1}  # each run: the main its five demonstrations leave
    subs = [doc for doc in docs if doc["kind"] != "main"]
    assert sorted(doc["doc_id"].split("@")[0] for doc in subs) == sorted(s.id for s in rule_data.all_sub_questions())
    first = rule_data.demo_sets("reclor")[0]
    shots = zip(first.questions, first.options, first.labels)
    demonstrated = rule_prompts.demonstrations([rule_prompts.demonstration(None, q, o, k) for q, o, k in shots])
    syn_1 = rule_data.main_questions()[0]
    block = rule_prompts.question_block(None, syn_1.question, syn_1.options)
    assert (docs[0]["doc_id"], docs[0]["prompt"]) == ("syn_1@1", f"{rule_prompts.INSTRUCTION}{demonstrated} {block}")


def test_five_shot_rationales_go_in_the_demonstrations_too() -> None:
    docs = rule_variants.docs_for("fewshot_rationale_selective")
    # the shared subset (syn_1, syn_4, syn_5, syn_6), each prompt leaving out its demonstrated mains
    assert ids(docs) == ["syn_1@1", "syn_4@4", "syn_5@5"]
    prompt = docs[0]["prompt"]
    # set 1's demonstrations: syn_2 to syn_6, each with its selective rationale, then the test question's
    assert prompt.count(" \n Rationale: ") == 5 + 1
    assert " \n Rationale: The critic judges the bridge by its architect's experience" in prompt
    # eliminative: syn_2 has no eliminative subquestion and syn_3's is a "None" gold: no line for them
    eliminative = rule_variants.docs_for("fewshot_rationale_eliminative")[0]["prompt"]
    demonstrated = eliminative.split(" \n Context: ")
    assert ["Rationale: " in shot for shot in demonstrated] == [False, False, True, True, True, True]
    none = rule_variants.docs_for("fewshot_rationale_none")
    assert all("Rationale:" not in doc["prompt"] for doc in none)
    assert none[0]["prompt"].startswith(rule_prompts.INSTRUCTION + rule_data.demo_sets("reclor")[0].prompt + " ")


def test_alignment_without_instruction_is_the_alignment_prompt_less_its_first_line() -> None:
    plain = rule_variants.docs_for("alignment_noinstr")
    instructed = rule_variants.docs_for("alignment")
    assert [rule_prompts.ALIGNMENT_INSTRUCTION + d["prompt"] for d in plain] == [d["prompt"] for d in instructed]


def test_five_shot_alignment_asks_every_item_under_five_prompts_of_two_and_three_exemplars() -> None:
    docs = rule_variants.docs_for("fewshot_alignment")
    items = [doc["doc_id"] for doc in rule_variants.docs_for("alignment")]
    assert [doc["doc_id"] for doc in docs] == [f"{i}@{k}" for k in range(1, 6) for i in items]
    mains = rule_data.main_questions()
    for shown in rule_data.demo_sets("reclor"):
        exemplars = rule_variants.alignment_exemplars(shown)
        about = [next(m for m in mains if f"Context: {m.context} \n" in e) for e in exemplars]
        correct = [f" \n Option: {m.options[m.label]} \n" in e for m, e in zip(about, exemplars)]
        assert sorted(correct) == [False, False, False, True, True]  # Appendix J: two correct, three incorrect
        assert {m.id for m in about} <= set(shown.main_ids)
        assert all(re.search(r"Answer: The answer is Rationale[0-3]$", e) for e in exemplars)
        asked = next(doc for doc in docs if doc["doc_id"].endswith(f"@{shown.index}"))["prompt"]
        assert asked.startswith(rule_prompts.ALIGNMENT_INSTRUCTION + rule_prompts.demonstrations(exemplars) + " ")
    plain = rule_variants.docs_for("fewshot_alignment_noinstr")
    assert [rule_prompts.ALIGNMENT_INSTRUCTION + d["prompt"] for d in plain] == [d["prompt"] for d in docs]


def test_the_protocol_runs_the_generated_tasks_of_every_setting() -> None:
    generated = {path.stem for path in (TASKS_DIR / "rule").glob("rule_*shot*_split*.yaml")}
    wanted = {
        task_name(shots, k, demos) for shots in rule_data.SHOTS for demos in rule_data.DEMOS for k in rule_data.SPLITS
    }
    assert {task for task in generated if "_bias_" not in task} == wanted and len(wanted) == 50  # the biased: their own
    for path in (TASKS_DIR / "rule").glob("rule_*shot*_split*.yaml"):
        text = path.read_text()
        template = (
            f"_rule{'_bias' if '_bias_' in path.stem else ''}{'_cot' if re.search(r'demos: cot', text) else ''}_yaml"
        )
        assert f"include: {template}\n" in text, path.name


def test_the_prompt_file_fixture_holds_every_published_entry() -> None:
    document = json.loads((MIRROR / "rule/prompt/prompts.json").read_text())
    assert {key: [e["name"] for e in document[key]] for key in ("5shots", "1shot")} == {
        key: list(rule_data.DEMOS.values()) for key in ("5shots", "1shot")
    }
